#!/usr/bin/env bash
# which lowering of readable runs is right on the GPU: variants by TILEFUSE_READABLE
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for v in nested pred 1; do
  for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward; do
    TILEFUSE_READABLE=$v ./$t > $OUT/7_${v}_$t.txt 2>&1; echo "$v $t rc=$? $(grep assertions $OUT/7_${v}_$t.txt)"
  done
done
