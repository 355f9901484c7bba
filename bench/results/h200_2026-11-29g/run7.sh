#!/usr/bin/env bash
# Runs 7-9 (a small bundle: libtilefuse and two test binaries, after the review's fix of
# staged checked loads without an `other`): the GPU tests of the staged loads and the norm
# backward; compute-sanitizer memcheck of the staged checked-load test and of the norm
# backward's cluster tests.
b=${1:?bundle}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
TEST_JOBS=2 timeout 300 $b/run-gpu-tests.sh 2>&1
(cd $b && timeout 230 compute-sanitizer --tool memcheck ./test_gpu_staged -tc='*staged checked*' 2>&1 | tail -6)
(cd $b && timeout 200 compute-sanitizer --tool memcheck ./test_gpu_norms_backward \
   -tc='*odd 16-bit rows*,*persistent cluster programs*' 2>&1 | tail -5)
