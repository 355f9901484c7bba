#!/usr/bin/env bash
# Run 4: test_gpu_row_chunks with its expectation fixed (softmax at 131072: 4 programs);
# then, two rounds: few long rows, the split schedule against softmax's held 64 KB programs
# (where with_split_rows should switch; run 3's attempt lacked SPLIT=0); the norms on the
# same held programs at many rows.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c4 && export TILEFUSE_CACHE_DIR=/tmp/c4
for t in test_gpu_row_chunks; do echo "#### $t"; timeout 120 ./$t 2>&1 | grep -E "ERROR|test cases|assertions" | head; done
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-58s ' $k $d "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
H="SPLIT=0 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8 min_programs_per_sm=3"
S="SPLIT=1 BLOCK=4096 num_warps=4"
for round in 1 2; do
  echo "#### round $round: few rows, split / held on half the cluster"
  for r in 16 33 48 64 100; do run softmax bf16 ${r}x262144 $S; run softmax bf16 ${r}x262144 $H cluster=8; done
  for r in 33 64; do run softmax f16 ${r}x262144 $S; run softmax f16 ${r}x262144 $H cluster=8; done
  for r in 33 64 100; do run softmax bf16 ${r}x131072 $S; run softmax bf16 ${r}x131072 $H cluster=4; done
  echo "#### round $round: norms, heuristic / held 4 x 8192"
  for k in rmsnorm add_rmsnorm layernorm; do
    run $k bf16 512x262144; run $k bf16 512x262144 $H cluster=8
    run $k bf16 2048x131072; run $k bf16 2048x131072 $H cluster=4
  done
done
