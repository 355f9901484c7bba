#!/usr/bin/env bash
# A/B: readable runs kept order with undefined vector registers (1), defined (fill), empty-run test first with defined registers (first_fill)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for round in 1 2; do
for v in 1 fill first_fill; do
  s=$(date +%s)
  TILEFUSE_READABLE=$v timeout 120 ./tilefuse-bench softmax,cross_entropy,softmax_bwd --shape 2048x65537,2048x128257,8192x8197,16384x4099,4096x16383 2>&1 | grep -E "^(softmax|cross)" | cut -c1-100 | sed "s/^/$v /"
  echo "round $round $v took $(( $(date +%s) - s )) s"
done; done
for t in test_gpu_softmax_backward test_gpu_row_chunks test_gpu_gallery; do
  TILEFUSE_READABLE=first_fill timeout 90 ./$t 2>&1 | grep -E 'test cases|ERROR' | head -5 | sed "s/^/first_fill $t /"
done
