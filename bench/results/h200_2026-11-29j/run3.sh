#!/usr/bin/env bash
# Run 3: attention against cuDNN in one command, peers' shapes (32768 tokens, 16 heads):
# d64 and d128, N 1024 / 4096 / 16384, causal or not, f16 and bf16, the heuristic of this
# build (the producer's copies of the last V block); then variants of d128 causal N1024
# (the shape furthest below cuDNN in run 2): 64-key blocks, TMA store, persistent without
# ping-pong turns, 3 stages.
b=${1:?bundle}; out=${2:?out}
s=32x16x1024x64,8x16x4096x64,2x16x16384x64,32x16x1024x64c,8x16x4096x64c,2x16x16384x64c
s=$s,32x16x1024x128,8x16x4096x128,2x16x16384x128,32x16x1024x128c,8x16x4096x128c,2x16x16384x128c
bench() { (cd $b && LD_LIBRARY_PATH=$PWD timeout 200 ./tilefuse-bench attention "$@" --reps 10 2>&1 | grep TFLOP); }
for dt in bf16 f16; do
  export TILEFUSE_CACHE_DIR=$(mktemp -d)
  echo "#### ours $dt"; bench --dtype $dt --shape $s
  pdt=$dt; [ $dt = f16 ] && pdt=fp16
  echo "#### cudnn $dt"
  (cd $b/peers && timeout 200 python3 peers.py attention --dtype $pdt --no-compile 2>/dev/null | grep cudnn | grep TFLOP/s
   timeout 200 python3 peers.py attention --dtype $pdt --causal --no-compile 2>/dev/null | grep cudnn | grep TFLOP/s)
done
c=32x16x1024x128c,32x16x2048x128c; mkdir -p /tmp/pp0
export TILEFUSE_CACHE_DIR=$(mktemp -d)
for round in 1 2; do
  echo "#### causal variants round $round: heuristic"; bench --dtype bf16 --shape $c
  echo "#### BLOCK_N=64"; bench --dtype bf16 --shape $c --set BLOCK_N=64
  echo "#### TMA_STORE=1"; bench --dtype bf16 --shape $c --set TMA_STORE=1
  echo "#### num_stages=3"; bench --dtype bf16 --shape $c --set num_stages=3
  echo "#### persistent, TILEFUSE_PINGPONG=0"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/pp0 bench --dtype bf16 --shape $c --set persistent=1
  echo "#### TILEFUSE_PINGPONG=0"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/pp0 bench --dtype bf16 --shape $c
done
