#!/usr/bin/env bash
# Run 7: persistent warp-specialized kernels with Q in two producer buffers (Q_VIEW): the
# TMA / warp-specialization GPU tests, and memcheck of the producer-copies test.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
echo "#### test_gpu_tma"; timeout 150 $b/test_gpu_tma 2>&1 | tail -4
echo "#### memcheck (producer copies)"
TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 100 compute-sanitizer --tool memcheck $b/test_gpu_tma -tc='*producer copies*' 2>&1 | tail -4
