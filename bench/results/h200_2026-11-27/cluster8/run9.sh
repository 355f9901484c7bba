#!/usr/bin/env bash
# The rest of the GPU suite on the final code (289f193): one line per binary, as each finishes
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_split_rows test_gpu_cluster_loops test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_ops test_gpu_cluster_combine test_gpu_staged test_gpu_aligned_rows test_gpu_realigned test_gpu_swiglu test_cuda_gpu test_nvptx_gpu test_gpu_persistent test_gpu_float8 test_gpu_tma; do s=$(date +%s); r=$(timeout 150 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)" | tee -a $OUT/9_gpu_suite_rest.txt; done
