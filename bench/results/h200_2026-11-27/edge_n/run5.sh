#!/usr/bin/env bash
# The final rule (B only, from 1536 rows, more than one wave) against no copy; cuBLAS; the GEMM GPU tests; memcheck of the new GEMM GPU cases
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=2000x3000x4000,1536x5000x8192,1024x5000x8192,4096x1000x4096,3000x3000x3000,8192x5000x4096,4096x4096x3000,4096x3000x4096,4096x4096x4096
echo "== rule"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
echo "== no copy"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-80
echo "== rule, f16"; ./tilefuse-bench matmul --dtype f16 --shape $S | grep -E "^matmul" | cut -c1-80
echo "== no copy, f16"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype f16 --shape $S | grep -E "^matmul" | cut -c1-80
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
echo "== GPU tests"
./test_gpu_tma -tc="*matmul*" 2>&1 | tail -2
./test_gpu_float8 2>&1 | tail -2
./test_gpu_gallery -tc="*matmul*" 2>&1 | tail -2
echo "== memcheck"
compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*last column*" 2>&1 | tail -4
compute-sanitizer --tool memcheck ./test_gpu_tma -tc="*matmul copies*" 2>&1 | tail -4
