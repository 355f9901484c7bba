#!/usr/bin/env bash
# Run 1: the whole GPU suite on this session's first build (the previous stop's final
# code plus mbarriers in buffers of their own, and persistent kernels keeping a copy's
# two buffers by storing dot results in their own layout); then d128 attention,
# persistent with Q copied by the producer (Q_VIEW=1: two buffers) against persistent
# with Q copied by the consumers and against one program per block (the heuristic),
# two rounds; cuDNN at causal N1024.
b=${1:?bundle}; out=${2:?out}
echo "#### suite"
(cd $b && TILEFUSE_CACHE_DIR=$(mktemp -d) TEST_JOBS=4 timeout 330 ./run-gpu-tests.sh 2>&1 | tail -28)
s=32x16x1024x128c,16x16x2048x128c,8x16x4096x128c,32x16x1024x128,8x16x4096x128
mkdir -p /tmp/c1 /tmp/c2 /tmp/c3
bench() { (cd $b && LD_LIBRARY_PATH=$PWD timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s "$@" --reps 10 2>&1 | grep TFLOP); }
for round in 1 2; do
  echo "#### round $round: one program per block"; TILEFUSE_CACHE_DIR=/tmp/c1 bench
  echo "#### round $round: persistent, Q by the consumers"; TILEFUSE_CACHE_DIR=/tmp/c2 bench --set persistent=1
  echo "#### round $round: persistent, Q by the producer (Q_VIEW=1)"; TILEFUSE_CACHE_DIR=/tmp/c3 bench --set persistent=1 --set Q_VIEW=1
done
echo "#### cudnn"
(cd $b/peers && for n in 1024 2048; do timeout 120 python3 peers.py attention --dtype bf16 --d 128 --n $n --causal --no-compile 2>&1 | grep -i cudnn; done)
