#!/usr/bin/env bash
# Cross-entropy's target logit (temporary XT): 0 a load issued once the target (now
# loaded first) arrives, 1 a masked sum in the program holding the column, 2 a masked
# sum in every program. bf16, heuristic configs and cluster 4 x 8192 at 32000.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
CE="8192x32000,4096x128256,2048x151936,16384x50304"
for round in 1 2; do
for xt in 0 1 2; do echo "== XT=$xt"
  ./tilefuse-bench cross_entropy $B --shape $CE --set XT=$xt | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7}'
  for w in 4 8; do ./tilefuse-bench cross_entropy $B --shape 8192x32000 --set XT=$xt --set BLOCK=8192 --set cluster=4 --set num_warps=$w --set min_programs_per_sm=4 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7, "c4x8192 warps '$w' p4"}'; done
done; done
./tilefuse-bench softmax $B --shape $CE | grep -E '^softmax'
for xt in 0 1 2; do echo "== ncu XT=$xt"
ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread ./tilefuse-bench cross_entropy --dtype bf16 --reps 1 --shape 4096x128256,16384x50304 --set XT=$xt 2>&1 | grep -E "^  cross_entropy_bf16|registers_per|gpu__time" | grep -A2 cross_entropy_bf16 | head -12
done
