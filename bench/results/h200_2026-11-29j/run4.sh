#!/usr/bin/env bash
# Run 4: causal attention at short N (the shapes below cuDNN in run 3), bf16: the
# heuristic; HEADS_FASTEST=1 (programs walk the heads first); persistent with it (and
# without ping-pong turns); d64 with 64-key blocks; alternated, two rounds. Then the GPU
# tests of attention.
b=${1:?bundle}; out=${2:?out}
c128=32x16x1024x128c,16x16x2048x128c,8x16x4096x128c
c64=32x16x1024x64c,16x16x2048x64c,8x16x4096x64c
mkdir -p /tmp/c1 /tmp/c2
bench() { (cd $b && LD_LIBRARY_PATH=$PWD timeout 200 ./tilefuse-bench attention --dtype bf16 "$@" --reps 10 2>&1 | grep TFLOP); }
for round in 1 2; do
  for s in $c128 $c64; do
    echo "#### round $round $s: heuristic"; TILEFUSE_CACHE_DIR=/tmp/c1 bench --shape $s
    echo "#### round $round $s: HEADS_FASTEST=1"; TILEFUSE_CACHE_DIR=/tmp/c1 bench --shape $s --set HEADS_FASTEST=1
    echo "#### round $round $s: persistent HEADS_FASTEST=1"; TILEFUSE_CACHE_DIR=/tmp/c1 bench --shape $s --set HEADS_FASTEST=1 --set persistent=1
    echo "#### round $round $s: persistent HEADS_FASTEST=1 TILEFUSE_PINGPONG=0"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/c2 bench --shape $s --set HEADS_FASTEST=1 --set persistent=1
    if [ $s = $c64 ]; then
      echo "#### round $round $s: BLOCK_N=64"; TILEFUSE_CACHE_DIR=/tmp/c1 bench --shape $s --set BLOCK_N=64
      echo "#### round $round $s: BLOCK_N=64 HEADS_FASTEST=1"; TILEFUSE_CACHE_DIR=/tmp/c1 bench --shape $s --set BLOCK_N=64 --set HEADS_FASTEST=1
    fi
  done
done
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
echo "#### gpu tests"
timeout 200 $b/test_gpu_tma 2>&1 | tail -4
timeout 200 $b/test_gpu_gallery -tc='*ttention*' 2>&1 | tail -3
