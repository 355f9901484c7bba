#!/usr/bin/env bash
# readable lanes: rows from their aligned start with the partly masked runs read whole (READABLE=1) or element by element (0)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
S=16384x4099,16384x4098,8192x8197,4096x16383,4096x30011,2048x65537,8192x20001
for k in softmax add_rmsnorm cross_entropy softmax_bwd rmsnorm layernorm; do
  echo "-- $k heuristic"
  $B $k --shape $S | grep -E "^$k " | cut -c1-120
  for rd in 0 1; do
    echo "-- $k ALIGN_ROWS=1 READABLE=$rd"
    TILEFUSE_READABLE=$rd $B $k --shape $S --set ALIGN_ROWS=1 | grep -E "^$k " | cut -c1-120
  done
done
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_row_chunks; do
  echo "== $t"; ./$t 2>&1 | tail -3
done
