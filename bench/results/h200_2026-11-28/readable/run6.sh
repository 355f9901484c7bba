#!/usr/bin/env bash
# the GPU tests with element loads from an opaque address; memcheck; a short A/B
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_row_chunks; do
  ./$t > $OUT/6_$t.txt 2>&1; echo "$t rc=$?"; tail -2 $OUT/6_$t.txt
done
echo "== memcheck test_gpu_aligned_rows, test_gpu_cross_entropy"
compute-sanitizer --tool memcheck ./test_gpu_aligned_rows 2>&1 | tail -2
compute-sanitizer --tool memcheck ./test_gpu_cross_entropy 2>&1 | tail -2
./tilefuse-bench softmax,cross_entropy --shape 16384x4099,2048x65537,8192x20001 | grep -E "^(softmax|cross)" | cut -c1-100
