#!/usr/bin/env bash
# Run 1: what the previous stop owes (the whole GPU suite on its final bundle; its bf16
# LayerNorm rule again, two rounds, and f16); then rows of 1M-4M columns (split schedule,
# 47-73% of copy) held in shared memory on clusters: 16 programs of 8 x 8192 held columns
# (128 KB each) for 1M bf16 columns, and clusters through memory for 4M.
b=${1:?bundle}; out=${2:?out}
echo "#### suite"
(cd $b && TILEFUSE_CACHE_DIR=$(mktemp -d) TEST_JOBS=4 timeout 300 ./run-gpu-tests.sh 2>&1 | tail -26)
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c1 && export TILEFUSE_CACHE_DIR=/tmp/c1
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-58s ' $k $d "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
for round in 1 2; do
  echo "#### LayerNorm 32 KB rule, round $round (heuristic, then the previous rule)"
  for d in bf16 f16; do
    run layernorm $d 8192x16384;  run layernorm $d 8192x16384 BLOCK=4096 CHUNKS=2 HELD=2 num_warps=4 cluster=2
    run layernorm $d 4096x32768;  run layernorm $d 4096x32768 BLOCK=4096 CHUNKS=2 HELD=2 num_warps=4 cluster=4
    run layernorm $d 2048x65536;  run layernorm $d 2048x65536 BLOCK=4096 CHUNKS=2 HELD=2 num_warps=4 cluster=8
  done
done
echo "#### long rows held in shared memory"
for k in softmax rmsnorm layernorm; do
  for s in 32x1048576 16x1048576 64x1048576; do
    run $k bf16 $s
    run $k bf16 $s SPLIT=0 cluster=16 BLOCK=8192 CHUNKS=8 HELD=8 num_warps=8
    run $k bf16 $s SPLIT=0 cluster=16 BLOCK=8192 CHUNKS=8 HELD=8 num_warps=16
  done
  run $k bf16 64x1048577
  run $k bf16 64x1048577 SPLIT=0 cluster=16 BLOCK=8192 CHUNKS=8 HELD=8 num_warps=8 TAIL=16
  run $k bf16 128x262144
  run $k bf16 128x262144 SPLIT=0 cluster=4 BLOCK=8192 CHUNKS=8 HELD=8 num_warps=8
  run $k bf16 128x262144 SPLIT=0 cluster=8 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8
  run $k bf16 8x4194304
  run $k bf16 8x4194304 SPLIT=0 cluster=64 BLOCK=8192 CHUNKS=8 HELD=8 num_warps=8
  run $k bf16 8x4194304 SPLIT=0 cluster=128 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8
  run $k f32 32x1048576
  run $k f32 32x1048576 SPLIT=0 cluster=16 BLOCK=8192 CHUNKS=8 HELD=6 num_warps=8
done
