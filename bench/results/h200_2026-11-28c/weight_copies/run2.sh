#!/usr/bin/env bash
# Weight copies, round 2: new defaults against the previous commit's (old/), thresholds, split LayerNorm, GPU tests.
cd "$(dirname "$0")"
B16="32737x1025,32641x1028,16384x2047,8191x4097,8185x4100,4096x8191,16384x4099,2048x16383,2048x16385,2048x16388,1024x32767,512x65535,512x65537,512x65540,128x262145,32x1048577,8x4194305"
for round in 1 2; do
for k in rmsnorm layernorm add_rmsnorm; do
  echo "== $k bf16 new round $round"; ./tilefuse-bench $k --dtype bf16 --shape $B16 --reps 10 --json
  echo "== $k bf16 old round $round"; ./old/tilefuse-bench $k --dtype bf16 --shape $B16 --reps 10 --json
done
done
S="256x4097,512x4097,1024x4097,2048x4097"
for k in rmsnorm layernorm; do
  echo "== $k bf16 copies"; ./tilefuse-bench $k --dtype bf16 --shape $S --reps 10 --json --set ALIGN_ROWS=1
  echo "== $k bf16 plain"; ./tilefuse-bench $k --dtype bf16 --shape $S --reps 10 --json --set ALIGN_ROWS=0
done
for round in 1 2; do
  echo "== layernorm bf16 splitcopies round $round"; ./tilefuse-bench layernorm --dtype bf16 --shape 128x262145,32x1048577,8x4194305 --reps 10 --json --set ALIGN_ROWS=1
done
F16="8191x4097,2048x16385,512x65537"
for k in rmsnorm layernorm; do
  echo "== $k f16 new"; ./tilefuse-bench $k --dtype f16 --shape $F16 --reps 10 --json
  echo "== $k f16 old"; ./old/tilefuse-bench $k --dtype f16 --shape $F16 --reps 10 --json
done
for t in test_gpu_aligned_rows test_gpu_row_chunks test_gpu_split_rows test_gpu_gallery; do
  echo "== test $t"; ./$t 2>&1 | tail -n 4
done
