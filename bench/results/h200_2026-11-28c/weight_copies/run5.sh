#!/usr/bin/env bash
# LayerNorm: masked lanes read the shift (new) against the previous commit (old/); GPU tests.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
S="65536x1024,32737x1025,16384x4096,8191x4097,8189x4098,16384x4099,16384x5000,4096x8191,2048x16384,2048x16385,2048x16388,512x65536,512x65537,512x262144,128x262145"
for round in 1 2; do
  for dt in bf16 f32; do
    echo "== layernorm $dt new round $round"; ./tilefuse-bench layernorm,layernorm_stats --dtype $dt --shape $S --reps 10 --json
    echo "== layernorm $dt old round $round"; (cd old && LD_LIBRARY_PATH=$PWD ./tilefuse-bench layernorm,layernorm_stats --dtype $dt --shape $S --reps 10 --json)
  done
done
for t in test_gpu_aligned_rows test_gpu_row_chunks test_gpu_split_rows test_gpu_norms_backward test_gpu_gallery; do
  echo "== test $t"; ./$t 2>&1 | tail -n 4
done
