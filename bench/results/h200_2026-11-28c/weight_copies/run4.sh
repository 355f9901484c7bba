#!/usr/bin/env bash
# Where the odd widths' gap comes from: the same chunked config on aligned rows, finer chunks on odd rows.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for k in rmsnorm layernorm; do
for round in 1 2; do
  echo "== $k bf16 heur round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8192x4096,8191x4097,2048x16384,2048x16385 --reps 10 --json
  echo "== $k bf16 c5x1024w4 round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8192x4096,8191x4097 --reps 10 --json --set BLOCK=1024 --set CHUNKS=5 --set num_warps=4
  echo "== $k bf16 c9x512w2 round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8192x4096,8191x4097 --reps 10 --json --set BLOCK=512 --set CHUNKS=9 --set num_warps=2
  echo "== $k bf16 c17x256w1 round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8192x4096,8191x4097 --reps 10 --json --set BLOCK=256 --set CHUNKS=17 --set num_warps=1
  echo "== $k bf16 c5x1024w4min8 round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8191x4097 --reps 10 --json --set BLOCK=1024 --set CHUNKS=5 --set num_warps=4 --set min_programs_per_sm=8
  echo "== $k bf16 c3x2048w8 round $round"; ./tilefuse-bench $k --dtype bf16 --shape 8192x4096,8191x4097 --reps 10 --json --set BLOCK=2048 --set CHUNKS=3 --set num_warps=8
done
done
