#!/usr/bin/env bash
# the empty-run test first again, now with the readable predicate recomputed where branched on (TILEFUSE_READABLE=first)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_row_chunks test_gpu_gallery; do
  TILEFUSE_READABLE=first ./$t > $OUT/9_$t.txt 2>&1; echo "first $t rc=$? $(grep 'test cases' $OUT/9_$t.txt)"
done
for v in 1 first; do TILEFUSE_READABLE=$v ./tilefuse-bench softmax,cross_entropy --shape 2048x65537,2048x128257 | grep -E "^(softmax|cross)" | cut -c1-90 | sed "s/^/$v /"; done
