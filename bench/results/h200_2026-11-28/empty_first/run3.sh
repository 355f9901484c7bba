#!/usr/bin/env bash
# final code: readable runs with the empty-run test first and defined vector registers; GPU tests of the row kernels + odd-width bench
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_row_chunks test_gpu_norms_backward test_gpu_realigned test_gpu_split_rows test_gpu_gallery; do
  s=$(date +%s); timeout 200 ./$t > $OUT/3_$t.txt 2>&1; echo "$t rc=$? $(grep -E 'test cases' $OUT/3_$t.txt) $(( $(date +%s) - s ))s"
done
for v in 0 1; do TILEFUSE_READABLE=$v timeout 100 ./tilefuse-bench softmax,cross_entropy,softmax_bwd,add_rmsnorm --shape 2048x65537,2048x128257,8192x8197,16384x4099,4096x16383,4096x30011 2>&1 | grep -E "^(softmax|cross|add)" | cut -c1-100 | sed "s/^/$v /"; done
