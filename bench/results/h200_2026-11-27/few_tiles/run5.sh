#!/usr/bin/env bash
# new GEMM tile rule vs the previous one (explicit configs), cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
M() { ./tilefuse-bench matmul --dtype bf16 --shape $1 "${@:2}" | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- ${*:2}"; }
NEW=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,1024x1024x1024,768x768x768,1000x777x333,512x4096x4096,4096x4096x4096
for r in 1 2; do
echo "== round $r: new rule"
./tilefuse-bench matmul --dtype bf16 --shape $NEW | grep -E "^matmul" | cut -c1-175
echo "== round $r: previous rule"
W="--set num_warps=4 --set BLOCK_K=64"
M 1x4096x4096,16x4096x4096,64x4096x4096,16x4096x14336 $W --set BLOCK_M=64 --set BLOCK_N=256 --set SPLIT_K=8 --set num_stages=4
M 16x14336x4096 $W --set BLOCK_M=64 --set BLOCK_N=256 --set SPLIT_K=2 --set num_stages=4
M 128x4096x4096 $W --set BLOCK_M=64 --set BLOCK_N=128 --set SPLIT_K=4 --set num_stages=4
M 256x4096x4096 $W --set BLOCK_M=64 --set BLOCK_N=128 --set SPLIT_K=2 --set num_stages=4
M 128x8192x8192,256x4096x14336 --set num_warps=8 --set BLOCK_K=64 --set BLOCK_M=128 --set BLOCK_N=256 --set SPLIT_K=4 --set num_stages=4
M 1024x1024x1024,768x768x768,1000x777x333 $W --set BLOCK_M=64 --set BLOCK_N=128 --set SPLIT_K=1 --set num_stages=4
done
P=""; for s in ${NEW//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
