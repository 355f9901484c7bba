#!/usr/bin/env bash
# Operands in rows 16 mod 32 bytes apart copied into 128-byte rows by the rule (default) against never (TILEFUSE_GEMM_COPY=0); cuBLAS in the same command; then the GEMM GPU tests
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=3000x3000x3000,4096x3000x8192,4096x3000x4096,8192x5000x4096,4096x2904x4096,4096x4096x3000,5000x5000x5000,1024x5000x8192,4096x1000x4096,2000x3000x4000,4096x4096x4096
for r in 1 2; do
echo "== round $r rule"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
echo "== round $r no copy"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-80
done
F=4096x4096x3088,8192x4096x3088,4096x4096x4096
echo "== 8-bit rule / no copy"
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-200
TILEFUSE_GEMM_COPY=0 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-80
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
A=8x16x4096x40,8x16x4096x56,8x16x4096x72,8x16x4096x88,8x16x4096x40c,2x16x16384x72
for r in 1 2; do
echo "== round $r attention, Q K V copied into 32-byte rows"; TILEFUSE_GEMM_COPY=1 ./tilefuse-bench attention --dtype f16 --shape $A | grep -E "^attention" | cut -c1-200
echo "== round $r attention as given"; ./tilefuse-bench attention --dtype f16 --shape $A | grep -E "^attention" | cut -c1-200
done
python3 peers.py attention --dtype fp16 --d 40 --d 56 --d 72 --d 88 --n 4096 2>&1 | grep -iE "cudnn|flash" | grep -v "#"
echo "== GPU tests"
./test_gpu_gallery -tc="*matmul*" 2>&1 | tail -3
./test_gpu_tma -tc="*matmul*" 2>&1 | tail -3
./test_gpu_float8 2>&1 | tail -3
