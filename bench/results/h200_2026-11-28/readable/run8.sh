#!/usr/bin/env bash
# final code: the GPU tests whose kernels or heuristics changed, memcheck of the new cases, and the heuristic against READABLE=0
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_row_chunks test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_gallery test_gpu_split_rows test_autotune_gpu test_dlpack_gpu test_gpu_realigned test_gpu_norms_backward; do
  ./$t > $OUT/8_$t.txt 2>&1; echo "$t rc=$? $(grep 'test cases' $OUT/8_$t.txt)"
done
echo "== memcheck"
compute-sanitizer --tool memcheck ./test_gpu_aligned_rows 2>&1 | tail -1
compute-sanitizer --tool memcheck ./test_gpu_row_chunks 2>&1 | tail -1
S=16384x4099,8192x8197,4096x16383,8192x20001,2048x128257
for rd in 0 1; do TILEFUSE_READABLE=$rd ./tilefuse-bench softmax,cross_entropy --shape $S | grep -E "^(softmax|cross)" | cut -c1-100 | sed "s/^/READABLE=$rd /"; done
