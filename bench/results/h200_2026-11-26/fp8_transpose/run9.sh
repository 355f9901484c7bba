#!/usr/bin/env bash
# split-K: tests, then the shapes with few output tiles, split rule vs off, with cuBLAS
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_gallery test_gpu_float8; do echo "== $t"; ./$t 2>&1 | grep -E "ERROR|CHECK|values|logged|test cases|Status" | head -20; done
echo "== memcheck split-K"; compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*splits K*" 2>&1 | tail -2
S=64x4096x4096,128x8192x8192,256x4096x14336,64x4096x4096+gelu,4096x4096x4096,512x4096x4096,1024x1024x1024
for r in 1 2; do
echo "== split rule round $r"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-150
echo "== no split round $r"; TILEFUSE_SPLIT_K=0 ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-90
done
for n in 2 4 8; do echo "== forced $n"; TILEFUSE_SPLIT_K=$n ./tilefuse-bench matmul --dtype bf16 --shape 64x4096x4096,128x8192x8192,256x4096x14336 | grep -E "^matmul" | cut -c1-150; done
python3 peers.py gemm --dtype bf16 --shape 64x4096x4096 --shape 128x8192x8192 --shape 256x4096x14336 2>&1 | grep -A20 "# summary"
