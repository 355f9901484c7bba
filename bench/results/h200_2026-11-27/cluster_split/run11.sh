#!/usr/bin/env bash
# final: the standard GEMM shapes (bf16, 8-bit) and mid/skinny shapes on the last code, cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000,64x4096x4096,200x8192x8192,512x4096x4096
for r in 1 2; do
./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-150
done
./tilefuse-bench scaled_matmul --dtype f8e4m3 | grep -E "^scaled" | cut -c1-150
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
