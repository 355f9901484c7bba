#!/usr/bin/env bash
# Run 3: the GPU tests of softmax's held 64 KB programs (test_gpu_row_chunks,
# test_gpu_held_loads); then, two rounds: the new heuristic against the previous configs at
# more shapes; few rows (the split schedule against the held programs on half the cluster:
# where with_split_rows should switch); widths that are not powers of two (multiples of 8)
# on held programs of 8 instead of register chunks on 16.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c3 && export TILEFUSE_CACHE_DIR=/tmp/c3
for t in test_gpu_row_chunks test_gpu_held_loads; do echo "#### $t"; timeout 120 ./$t 2>&1 | tail -3; done
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-58s ' $k $d "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
H="BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8 min_programs_per_sm=3"
S="SPLIT=1 BLOCK=4096 num_warps=4"
for round in 1 2; do
  echo "#### round $round: new heuristic / previous"
  run softmax bf16 4096x128256; run softmax bf16 4096x128256 BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 cluster=8 min_programs_per_sm=3
  run softmax f16 4096x128256;  run softmax f16 4096x128256 BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 cluster=8 min_programs_per_sm=3
  run softmax bf16 256x262144;  run softmax bf16 256x262144 BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 cluster=16 min_programs_per_sm=3
  run softmax bf16 2048x131072; run softmax bf16 2048x131072 BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 cluster=8 min_programs_per_sm=3
  echo "#### round $round: few rows, split / held on half the cluster"
  for r in 33 48 64 100; do run softmax bf16 ${r}x262144 $S; run softmax bf16 ${r}x262144 $H cluster=8; done
  for r in 64 100; do run softmax bf16 ${r}x131072 $S; run softmax bf16 ${r}x131072 $H cluster=4; done
  echo "#### round $round: widths off powers of two: heuristic / held on 8"
  run softmax bf16 160x200000; run softmax bf16 160x200000 $H cluster=8
  run softmax bf16 160x200000 BLOCK=4096 CHUNKS=7 HELD=7 num_warps=8 min_programs_per_sm=3 cluster=8
  run softmax bf16 256x150000; run softmax bf16 256x150000 BLOCK=4096 CHUNKS=5 HELD=5 num_warps=8 min_programs_per_sm=3 cluster=8
  run softmax bf16 256x150000 BLOCK=8192 CHUNKS=3 HELD=3 num_warps=8 min_programs_per_sm=3 cluster=8
  run softmax bf16 320x100000; run softmax bf16 320x100000 BLOCK=4096 CHUNKS=7 HELD=7 num_warps=8 min_programs_per_sm=3 cluster=4
  run softmax bf16 320x100000 BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 min_programs_per_sm=3 cluster=8
  run softmax bf16 192x163840; run softmax bf16 192x163840 BLOCK=4096 CHUNKS=5 HELD=5 num_warps=8 min_programs_per_sm=3 cluster=8
done
