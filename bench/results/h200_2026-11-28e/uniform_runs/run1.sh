#!/usr/bin/env bash
# GPU tests of the kernels and lowering that checked runs touch (warp-uniform finishing on).
cd "$(dirname "$0")"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p t && for x in test_gpu_aligned_rows test_gpu_row_chunks test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_norms_backward test_gpu_split_rows test_gpu_realigned test_gpu_gallery test_nvptx_gpu test_gpu_swiglu test_gpu_memory_clusters test_gpu_ops test_gpu_staged; do mv $x t/; done
cp libtilefuse.so* t/ && cp run-gpu-tests.sh t/ && bash t/run-gpu-tests.sh
