#!/usr/bin/env bash
# skinny GEMMs: split-K over one-program-per-SM tilings (64x128 and 128x128, 6 stages) against the rule
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- $*"; }
for r in 1 2; do
S=64x4096x4096,64x4096x14336,64x14336x4096
B
B --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=6 --set SPLIT_K=4
B --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=6 --set SPLIT_K=2
B --set BLOCK_M=64 --set BLOCK_N=64 --set num_warps=4 --set num_stages=8 --set SPLIT_K=4
B --set BLOCK_M=64 --set BLOCK_N=64 --set BLOCK_K=128 --set num_warps=4 --set num_stages=4 --set SPLIT_K=4
S=128x4096x4096,128x4096x14336,128x14336x4096
B
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=4
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=2
B --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=6 --set SPLIT_K=2
S=256x4096x4096,256x4096x14336,256x14336x4096
B
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=2
B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=1
done
S=64x4096x4096,64x4096x14336,64x14336x4096,128x4096x4096,128x4096x14336,128x14336x4096,256x4096x4096,256x4096x14336,256x14336x4096
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
