#!/usr/bin/env bash
# Run 1: the GPU test binaries never run on the previous stop's code (bundle of e7cb024,
# the final commit less the review's tuner-plan change), each under a time limit.
b=${1:-$(dirname "$0")}
export TILEFUSE_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for tl in test_gpu_norms_backward:180 test_gpu_tma:130 test_gpu_float8:90 test_nvptx_gpu:130; do
  t=${tl%:*}; s=$(date +%s); timeout ${tl#*:} $b/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || [ $rc = 124 ] || tail -30 /tmp/$t.log
done
