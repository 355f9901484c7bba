#!/usr/bin/env bash
# The GPU test binaries with GEMM launches not run in runs 3-5 (persistent and warp-specialized GEMMs, the tuner, ops, DLPack, the compiler's differential tests), on the final code
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_persistent test_gpu_ops test_dlpack_gpu test_autotune_gpu test_gpu_tma test_nvptx_gpu; do s=$(date +%s); r=$(timeout 200 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)"; done
