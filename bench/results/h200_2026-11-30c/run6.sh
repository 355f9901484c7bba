#!/usr/bin/env bash
# Run 6: row kernels at two standard shapes under 90%, other programs, two rounds:
# 16384x4096 (one row per program) against two or four rows per program (ROWS, one 2-D
# tile); LayerNorm's held programs of 16384 columns as 2 x 8192 on 16 warps (run 2:
# 8192x16384 92.3 -> 94.7-95.2) at more rows and widths, bf16 and f16.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c6 && export TILEFUSE_CACHE_DIR=/tmp/c6
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-12s %-70s ' $k $d $s "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=$3=""; print}' | cut -c1-200; }
W16="SPLIT=0 BLOCK=8192 CHUNKS=2 HELD=2 num_warps=16 min_programs_per_sm=0"
for round in 1 2; do
  echo "#### round $round"
  for k in layernorm rmsnorm softmax; do
    run $k bf16 16384x4096
    for r in "2 4" "2 8" "2 16" "4 8" "4 16"; do set -- $r; run $k bf16 16384x4096 ROWS=$1 BLOCK=4096 num_warps=$2; done
  done
  run layernorm f16 16384x4096; run layernorm f16 16384x4096 ROWS=2 BLOCK=4096 num_warps=8
  for d in bf16 f16; do for s in 8192x16384 4096x16384 16384x16384 8192x15000 8192x16376; do
    run layernorm $d $s; run layernorm $d $s $W16
  done; done
  run layernorm bf16 4096x32768; run layernorm bf16 4096x32768 $W16 cluster=2
  run layernorm bf16 2048x65536; run layernorm bf16 2048x65536 $W16 cluster=4
done
