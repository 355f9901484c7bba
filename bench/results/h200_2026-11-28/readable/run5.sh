#!/usr/bin/env bash
# the failing GPU tests, full output
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward; do
  ./$t > $OUT/5_$t.txt 2>&1; echo "$t rc=$?"
  TILEFUSE_READABLE=0 ./$t > $OUT/5_${t}_readable0.txt 2>&1; echo "$t READABLE=0 rc=$?"
done
