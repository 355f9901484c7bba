#!/usr/bin/env bash
# split-K: unrolled reduction, 3-D partials, L2 rule; variants
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 "$@" | grep -E "^matmul" | cut -c1-175; }
SK=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,512x4096x4096,1024x1024x1024
for r in 1 2; do echo "== heuristic round $r"; B --shape $SK; done
echo "== 64x128 tiles"
for s in 1 2 4 8; do B --shape 16x4096x4096,64x4096x4096,128x4096x4096,16x4096x14336,512x4096x4096,1024x1024x1024 --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set SPLIT_K=$s; done
echo "== 64x256 tiles"
for s in 4 8; do B --shape 16x4096x4096,64x4096x4096,16x4096x14336 --set BLOCK_M=64 --set BLOCK_N=256 --set num_warps=4 --set SPLIT_K=$s; done
echo "== 128x256 tiles"
for s in 2 4 8; do B --shape 128x4096x4096,128x8192x8192,256x4096x14336,512x4096x4096,1024x1024x1024 --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set SPLIT_K=$s; done
echo "== stages / BLOCK_K at 64x4096x4096"
B --shape 16x4096x4096,64x4096x4096 --set num_stages=6
B --shape 16x4096x4096,64x4096x4096 --set num_stages=3 --set BLOCK_K=128
P=""; for s in ${SK//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep cublas
echo "== ncu"
ncu --clock-control none --metrics gpu__time_duration.sum ./tilefuse-bench matmul --dtype bf16 --shape 16x4096x4096,64x4096x4096,128x4096x4096,16x4096x14336,128x8192x8192 --reps 1 2>&1 | awk '/^  matmul/{n=$1" "$2; next} /gpu__time/{print n, $NF}'
