#!/usr/bin/env bash
# final commit: the GPU tests of the row schedules and the gallery, a few bench rows
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_split_rows test_gpu_row_chunks test_gpu_aligned_rows test_autotune_gpu test_gpu_gallery; do
  s=$(date +%s); timeout 150 ./$t 2>&1 | grep -E "test cases|assertions|ERROR|FAIL" | head -6 | sed "s/^/$t: /"; echo "$t $(( $(date +%s)-s )) s"
done
timeout 60 ./tilefuse-bench softmax,rmsnorm --dtype bf16 --shape 128x262144,32x1048577,128x262145 --reps 10 2>&1 | grep -E "^[a-z_]+ +bf16" | cut -c1-110
