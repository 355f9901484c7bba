#!/usr/bin/env bash
# Run 8: the GPU tests the last commits touch, on the final code (one loop over the
# programs for the persistent consumers and the producer; the review's fixes): TMA and
# warp specialization (persistent cases), persistent kernels, row chunks (softmax tails),
# the gallery; memcheck of the persistent warp-specialized case.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_tma $b/test_gpu_persistent $b/test_gpu_row_chunks $b/test_gpu_gallery $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
( TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 250 compute-sanitizer --tool memcheck $b/test_gpu_tma -tc='*persistent*' > /tmp/memcheck.txt 2>&1
  echo "memcheck rc=$?" >> /tmp/memcheck.txt ) &
TEST_JOBS=4 timeout 280 /tmp/t/run-gpu-tests.sh 2>&1 | tail -8
wait
echo "#### memcheck"; tail -4 /tmp/memcheck.txt
