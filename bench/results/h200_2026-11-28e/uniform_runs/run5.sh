#!/usr/bin/env bash
# GPU tests of the final lowering (warp-uniform finishing of ops of several runs per
# thread), most affected first; stops starting binaries after ~300 s.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
start=$SECONDS
for t in test_gpu_softmax_backward test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_row_chunks test_nvptx_gpu test_gpu_split_rows test_gpu_gallery test_gpu_norms_backward; do
  if [ $((SECONDS-start)) -gt 300 ]; then echo "NOT RUN $t (time)"; continue; fi
  t0=$SECONDS
  if timeout 200 ./$t > $t.log 2>&1; then echo "PASS $t: $(grep -h 'test cases:' $t.log | tail -1) ($((SECONDS-t0)) s)"; else echo "FAIL $t rc=$? ($((SECONDS-t0)) s)"; tail -40 $t.log; fi
done
