#!/usr/bin/env bash
# The whole GPU suite on this commit, then memcheck of the ALIGN_ROWS gallery cases.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
start=$SECONDS
./run-gpu-tests.sh
echo "suite took $((SECONDS-start)) s"
t=$SECONDS
timeout 120 compute-sanitizer --tool memcheck ./test_gpu_aligned_rows -tc='*gallery row kernels*' 2>&1 | grep -E "ERROR SUMMARY|test cases|FAIL" 
echo "memcheck took $((SECONDS-t)) s"
