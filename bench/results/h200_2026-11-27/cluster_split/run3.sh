#!/usr/bin/env bash
# mid-size GEMMs (a few hundred rows): large tiles with K split in two against the rule's 64x128 tiles
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=384x4096x4096,512x4096x4096,640x4096x4096,768x4096x4096,512x8192x8192,512x4096x14336,512x14336x4096,1024x4096x4096
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- $*"; }
for r in 1 2; do
B
B --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=2
B --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=1
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=1
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=4 --set SPLIT_K=2
B --set BLOCK_M=64 --set BLOCK_N=256 --set num_warps=4 --set num_stages=4 --set SPLIT_K=2
B --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=4 --set SPLIT_K=2
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
