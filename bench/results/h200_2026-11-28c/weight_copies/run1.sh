#!/usr/bin/env bash
# A/B: misaligned norm rows, default (aligned rows + weight copies) vs ALIGN_ROWS=0 (plain rows) vs WEIGHT_COPIES=0 (realigned weight)
cd "$(dirname "$0")"
S16="32737x1025,32705x1026,32641x1028,8191x4097,8189x4098,8185x4100,2048x16385,2048x16386,2048x16388,512x65537,512x65538,512x65540,256x4097,16384x4099"
for round in 1 2; do
for k in rmsnorm layernorm add_rmsnorm; do
  echo "== $k bf16 default round $round"; ./tilefuse-bench $k --dtype bf16 --shape $S16 --reps 10 --json
  echo "== $k bf16 ALIGN_ROWS=0 round $round"; ./tilefuse-bench $k --dtype bf16 --shape $S16 --reps 10 --json --set ALIGN_ROWS=0
  if [ $round = 1 ]; then echo "== $k bf16 WEIGHT_COPIES=0 round $round"; ./tilefuse-bench $k --dtype bf16 --shape $S16 --reps 10 --json --set WEIGHT_COPIES=0; fi
done
done
SF="8191x4097,8190x4098,2048x16385,512x65537"
for k in rmsnorm layernorm; do
  echo "== $k f32 default"; ./tilefuse-bench $k --dtype f32 --shape $SF --reps 10 --json
  echo "== $k f32 ALIGN_ROWS=0"; ./tilefuse-bench $k --dtype f32 --shape $SF --reps 10 --json --set ALIGN_ROWS=0
done
