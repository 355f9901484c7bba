#!/usr/bin/env bash
# Run 2: memcheck of test_gpu_row_chunks (the previous stop's new cases: f32 norms held and
# in registers at 65536-262143 columns, bf16 LayerNorm at 16384 on one program); then softmax
# on half the cluster with twice the held chunks (run 1: 128x262144 70.7 -> 78.6), two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c2 && export TILEFUSE_CACHE_DIR=/tmp/c2
t=$SECONDS
timeout 240 compute-sanitizer --tool memcheck ./test_gpu_row_chunks 2>&1 | grep -E "ERROR SUMMARY|test cases|FAIL|rror" | head -20
echo "memcheck took $((SECONDS-t)) s"
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-58s ' $k $d "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
for round in 1 2; do
  echo "#### round $round"
  for d in bf16 f16; do
    for s in 128x262144 512x262144; do run softmax $d $s; run softmax $d $s cluster=8 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8; done
    for s in 256x131072 1024x131072; do run softmax $d $s; run softmax $d $s cluster=4 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8; done
    for s in 2048x65536; do run softmax $d $s; run softmax $d $s cluster=2 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8; done
  done
  run cross_entropy bf16 1024x256000; run cross_entropy bf16 1024x256000 cluster=8 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8
  run cross_entropy bf16 4096x128256; run cross_entropy bf16 4096x128256 cluster=4 BLOCK=8192 CHUNKS=4 HELD=4 num_warps=8
done
