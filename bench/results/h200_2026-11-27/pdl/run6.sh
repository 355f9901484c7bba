#!/usr/bin/env bash
# PDL only for grids of at most TILEFUSE_PDL_BLOCKS blocks (predicated wait, no trigger at entry): sweep the limit.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for round in 1 2; do for lim in 0 264 1056 4224 100000000; do
  echo "== PDL_BLOCKS $lim round $round"
  export TILEFUSE_PDL_BLOCKS=$lim
  ./tilefuse-bench matmul --dtype bf16 --reps 30 --shape 1x4096x4096,128x4096x4096,16x14336x4096,256x4096x14336 | grep -E "^matmul " | awk '{print $1,$3,$4}'
  ./tilefuse-bench cross_entropy --dtype bf16 --reps 20 --shape 8192x32000,2048x151936 | grep -E "^cross" | awk '{print $1,$3,$4,$6}'
  ./tilefuse-bench softmax --dtype bf16 --reps 20 --shape 65536x1024,16384x5000,4096x1024,16384x4096,1024x4096 | grep -E "^softmax" | awk '{print $1,$3,$4,$6}'
  ./tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype bf16 --reps 20 --shape 16384x4096,4096x1024 | grep -E "norm_bwd" | awk '{print $1,$3,$4,$6}'
done; done
