#!/usr/bin/env bash
# Cross-entropy's row program bisected (temporary PROBE bits, bf16, heuristic configs):
# 1 no target-logit load, 2 no target load, 4 no scalar stores, 8 no 1/count load,
# 16 a two-value exchange. Checks fail by design for PROBE != 0.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
CE="8192x32000,4096x128256,2048x151936,16384x50304"
./tilefuse-bench softmax $B --shape $CE | grep -E '^softmax'
for p in 0 1 2 4 8 16 3 5 31 0; do echo "== PROBE=$p"
  ./tilefuse-bench cross_entropy $B --shape $CE --set PROBE=$p | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7}'
done
for p in 0 4; do
ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers ./tilefuse-bench cross_entropy --dtype bf16 --reps 1 --shape 4096x128256 --set PROBE=$p 2>&1 | grep -A3 -E "^  cross_entropy_bf16" | head -4
done
