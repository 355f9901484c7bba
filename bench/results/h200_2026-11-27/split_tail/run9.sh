#!/usr/bin/env bash
# the final code: the split-tail GPU test (the heuristic's own split at 1100x2048x4096), the final rule at 1100x4096x4096
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_gallery -tc="*last partial wave*" 2>&1 | tail -2
W="--set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=1 --set SPLIT_TAIL=0"
for r in 1 2; do
./tilefuse-bench matmul --dtype bf16 --shape 1100x4096x4096,1100x2048x4096 | grep -E "^matmul" | cut -c1-200
./tilefuse-bench matmul --dtype bf16 --shape 1100x4096x4096,1100x2048x4096 $W | grep -E "^matmul" | cut -c1-80
done
