#!/usr/bin/env bash
# Run 9 (the last device time, final commit's whole bundle): the GPU test binaries that
# runs 1-8 did not run, each under a time limit, then the rows and cross-entropy ones.
b=${1:-$(dirname "$0")}
export TILEFUSE_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$b
for t in test_gpu_ops test_gpu_realigned test_gpu_staged test_gpu_persistent test_gpu_cluster_loops test_gpu_cluster_combine test_gpu_memory_clusters test_gpu_norms_backward test_gpu_row_batches test_gpu_cross_entropy; do
  s=$(date +%s); timeout 40 $b/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || [ $rc = 124 ] || tail -30 /tmp/$t.log
done
