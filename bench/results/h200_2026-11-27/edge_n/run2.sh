#!/usr/bin/env bash
# Operand rows copied to 32/64/128-byte strides first (TILEFUSE_GEMM_ROW_BYTES) against as given (16 bytes); cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=3000x3000x3000,4096x3000x8192,4096x3000x4096,8192x5000x4096,4096x2904x4096,1024x5000x8192,4096x1000x4096,2000x2000x2000,4000x4000x4000,6000x6000x6000,4096x4096x4096
for r in 1 2; do
echo "== round $r as given"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
for rb in 32 64 128; do
echo "== round $r rows of $rb bytes"; TILEFUSE_GEMM_ROW_BYTES=$rb ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-80
done
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
