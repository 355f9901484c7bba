#!/usr/bin/env bash
# Run 7: the final code: the GPU tests of the row heuristics (row chunks with the new tail
# case, split rows, held loads); then the plain norms at 16-bit widths of 8-byte runs a
# little past 262144 columns, tails (heuristic) against the split schedule
# (TILEFUSE_ROW_TAIL=0), two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c7 && export TILEFUSE_CACHE_DIR=/tmp/c7
for t in test_gpu_row_chunks test_gpu_split_rows test_gpu_held_loads; do echo "#### $t"; timeout 120 ./$t 2>&1 | grep -E "ERROR|test cases|assertions" | head; done
run() { local k=$1 d=$2 s=$3; shift 3
  printf '%-10s %-4s %-16s ' $k $d "$*"; env "$@" timeout 60 ./tilefuse-bench $k --dtype $d --shape $s --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
for round in 1 2; do
  echo "#### round $round: tails / split"
  for k in rmsnorm layernorm; do
    for s in 128x262148 512x262148 256x262660; do run $k bf16 $s X=1; run $k bf16 $s TILEFUSE_ROW_TAIL=0; done
    run $k f16 512x262148 X=1; run $k f16 512x262148 TILEFUSE_ROW_TAIL=0
  done
done
