#!/usr/bin/env bash
# tile sweep for GEMMs with few tiles; chain test
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
true
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- $*"; }
S=16x4096x4096,64x4096x4096,128x4096x4096,512x4096x4096,1024x1024x1024,2048x2048x2048,128x8192x8192
B
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=32 --set num_warps=4 --set num_stages=8
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=32 --set num_warps=4 --set num_stages=6 --set BLOCK_K=128
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=64 --set num_warps=4 --set num_stages=6
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=64 --set num_warps=4 --set num_stages=4 --set BLOCK_K=128
B --set SPLIT_K=2 --set BLOCK_M=64 --set BLOCK_N=64 --set num_warps=4 --set num_stages=6
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=6
B --set SPLIT_K=1 --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=4
B --set SPLIT_K=1 --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=4 --set num_stages=4
B --set SPLIT_K=1 --set BLOCK_M=128 --set BLOCK_N=64 --set num_warps=4 --set num_stages=6
B --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=256 --set num_warps=4 --set num_stages=4
B --set SPLIT_K=2 --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=4
B --set SPLIT_K=4 --set BLOCK_M=64 --set BLOCK_N=64 --set num_warps=4 --set num_stages=6
B
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
