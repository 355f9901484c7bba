#!/usr/bin/env bash
# every predicated vector load's registers start at zero (not undefined): GPU tests + A/B against TILEFUSE_UNDEF_FILL=1
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_row_chunks test_gpu_realigned test_gpu_split_rows; do
  timeout 60 ./$t > /dev/null 2>&1; echo "$t rc=$?"
done
for v in 1 0; do TILEFUSE_UNDEF_FILL=$v timeout 60 ./tilefuse-bench softmax,cross_entropy,rmsnorm,layernorm,add_rmsnorm,softmax_bwd --shape 8192x8197,4096x16383,2048x65537 2>&1 | grep -E "^[a-z_]+ +bf16" | cut -c1-72 | sed "s/^/undef=$v /"; done
