#!/usr/bin/env bash
# Run 4: attention with block 0 peeled off the P.V-behind loops (no P.V of a zero block:
# 1 MMA in 17 at 8 key blocks) against the previous build (old/), f16 and bf16, d128 and
# d64, alternated, two rounds, cuDNN (peers.py) in the same command; then the GPU tests
# of attention on the new build (test_gpu_tma, the gallery's attention cases).
b=${1:?bundle}; out=${2:?out}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
s=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c,32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
run() { (cd $1 && LD_LIBRARY_PATH=$PWD timeout 150 ./tilefuse-bench attention --dtype $2 --shape $s --reps 10 2>&1 | grep TFLOP); }
for dt in bf16 f16; do
  for round in 1 2; do
    echo "#### $dt round $round: old"; run $b/../old $dt
    echo "#### $dt round $round: peeled"; run $b $dt
  done
done
for dt in bf16 fp16; do
  echo "#### peers $dt"
  (cd $b/peers && timeout 150 python3 peers.py attention --dtype $dt --no-compile 2>/dev/null | grep cudnn
   timeout 150 python3 peers.py attention --dtype $dt --causal --no-compile 2>/dev/null | grep cudnn)
done
echo "#### gpu tests"
export LD_LIBRARY_PATH=$b
timeout 150 $b/test_gpu_tma 2>&1 | tail -3
timeout 200 $b/test_gpu_gallery -tc='*ttention*' 2>&1 | tail -3
