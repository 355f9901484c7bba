#!/usr/bin/env bash
# readable runs (3): empty runs first; softmax one-program odd widths from the aligned start; GPU tests + memcheck
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
S=16384x4099,16384x4097,8192x8197,4096x16383,4096x30011,2048x65537,8192x20001,2048x128257
{
for k in softmax cross_entropy softmax_bwd add_rmsnorm; do
  for rd in 0 1; do
    echo "-- $k heuristic READABLE=$rd"
    TILEFUSE_READABLE=$rd $B $k --shape $S | grep -E "^$k " | cut -c1-120
  done
done
echo "-- softmax f16 heuristic"
$B softmax --dtype f16 --shape $S | grep -E "^softmax " | cut -c1-120
echo "-- softmax heuristic without ALIGN_ROWS"
$B softmax --shape $S --set ALIGN_ROWS=0 | grep -E "^softmax " | cut -c1-120
} > $OUT/4_ab.txt 2>&1
cat $OUT/4_ab.txt
for t in test_gpu_aligned_rows test_gpu_cross_entropy test_gpu_softmax_backward test_gpu_row_chunks; do
  echo "== $t"; ./$t 2>&1 | tail -2
done
echo "== memcheck test_gpu_aligned_rows"
compute-sanitizer --tool memcheck ./test_gpu_aligned_rows 2>&1 | tail -4
