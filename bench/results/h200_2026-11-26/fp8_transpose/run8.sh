#!/usr/bin/env bash
# the GEMM tile rule (64x128 where 128x256 leaves over half the SMs idle), tests
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_gallery test_gpu_float8; do echo "== $t"; ./$t 2>&1 | tail -2; done
S=1024x1024x1024,2048x2048x2048,64x4096x4096,128x8192x8192,512x4096x4096,4096x1024x1024,256x4096x14336,2048x2048x1024,4096x4096x4096,8192x8192x1024,1000x777x333
for r in 1 2; do
echo "== bf16 round $r"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-150
echo "== f8e4m3 round $r"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $S | grep -E "^scaled" | cut -c1-150
done
echo "== f8e4m3 precise at K 14336"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 256x4096x14336 --set PRECISE_ACC=1 | grep -E "^scaled" | cut -c1-150
