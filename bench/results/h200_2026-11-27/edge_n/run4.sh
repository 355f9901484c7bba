#!/usr/bin/env bash
# The per-operand rule (B copied from 2048 rows of reuse, A from 8192 columns) against no copy and against both forced; cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=3000x3000x3000,4096x4096x3000,4096x16384x3000,2000x3000x4000,5000x5000x5000,2048x5000x8192
F=4096x4096x3088,8192x4096x3088
for r in 1 2; do
echo "== round $r rule"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
echo "== round $r no copy"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-80
echo "== round $r both copied"; TILEFUSE_GEMM_COPY=1 ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-80
echo "== round $r 8-bit rule / no copy / both"
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-200
TILEFUSE_GEMM_COPY=0 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-80
TILEFUSE_GEMM_COPY=1 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-80
done
python3 peers.py gemm --dtype bf16 --no-compile --shape 4096x16384x3000 --shape 2048x5000x8192 --shape 5000x5000x5000 2>&1 | grep -E "cublas  "
echo "== GPU tests"
./test_gpu_tma -tc="*matmul*" 2>&1 | tail -3
./test_gpu_float8 2>&1 | tail -3
./test_gpu_gallery -tc="*matmul*" 2>&1 | tail -3
