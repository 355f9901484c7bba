#!/usr/bin/env bash
# 128x128 tiles at M = 200 (slower than at M = 256 with the same grid): ncu of both; tilings at 300x4096x4096 and 1536^3
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- $*"; }
T="--set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=1"
S=192x8192x8192,200x8192x8192,224x8192x8192,240x8192x8192,256x8192x8192,200x8192x4096,256x8192x4096,300x4096x4096,384x4096x4096
B $T
B $T --set GROUP_M=1
B $T --set num_stages=5
S=200x8192x8192,256x8192x8192
ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread ./tilefuse-bench matmul --dtype bf16 --shape 200x8192x8192 $T --reps 2 2>&1 | grep -E "matmul_bf16|gpu__time|dram__|lts__|tensor|inst_exec|registers" | head -14
ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread ./tilefuse-bench matmul --dtype bf16 --shape 256x8192x8192 $T --reps 2 2>&1 | grep -E "matmul_bf16|gpu__time|dram__|lts__|tensor|inst_exec|registers" | head -14
S=300x4096x4096,320x4096x4096
B
B --set BLOCK_M=64 --set BLOCK_N=256 --set num_warps=4 --set num_stages=4 --set SPLIT_K=1
B --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=6 --set SPLIT_K=1
S=1536x1536x1536,1280x1280x1280,1792x1792x1792
B
B $T
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=3 --set SPLIT_K=1
B --set BLOCK_M=64 --set BLOCK_N=256 --set num_warps=4 --set num_stages=4 --set SPLIT_K=1
B --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=2
S=300x4096x4096,192x8192x8192,224x8192x8192,240x8192x8192,200x8192x4096,320x4096x4096,1280x1280x1280,1792x1792x1792
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
