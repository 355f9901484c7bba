#!/usr/bin/env bash
# Run 10: the final code (early release by default in warp-specialized loops, ping-pong by
# default where a loop has two dots, the d128 heuristic warp-specialized with
# RESCALE_LATE, the whole-program JIT for setmaxnreg kernels): the attention heuristic
# at the peers' shapes, d128 and d64, f16 and bf16 (d128); the TMA and gallery GPU tests.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s128=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
s64=32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
for round in 1 2; do
  echo "#### round $round"
  timeout 100 $b/tilefuse-bench attention --dtype f16 --shape $s128 --reps 10 2>&1 | grep TFLOP
  [ $round = 1 ] && timeout 100 $b/tilefuse-bench attention --dtype bf16 --shape $s128 --reps 10 2>&1 | grep TFLOP
  [ $round = 1 ] && timeout 100 $b/tilefuse-bench attention --dtype f16 --shape $s64 --reps 10 2>&1 | grep TFLOP
done
echo "#### test_gpu_tma"
timeout 120 $b/test_gpu_tma 2>&1 | tail -3
echo "#### test_gpu_gallery attention"
timeout 100 $b/test_gpu_gallery -tc='*attention*' 2>&1 | tail -3
