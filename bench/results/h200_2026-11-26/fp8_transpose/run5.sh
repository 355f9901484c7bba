#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_float8 test_gpu_tma test_gpu_cross_entropy; do echo "== $t"; ./$t 2>&1 | tail -2; done
echo "== memcheck test_gpu_float8"; compute-sanitizer --tool memcheck ./test_gpu_float8 2>&1 | tail -3
ODD=256x256x255,384x384x383,128x1024x1023,1024x128x1023,512x512x511,1000x777x333,200x3000x999,4096x4096x4095
echo "== bf16 odd, rule"; ./tilefuse-bench matmul --dtype bf16 --shape "$ODD" | grep matmul | cut -c1-75
echo "== bf16 odd, TILEFUSE_GEMM_COPY=0"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype bf16 --shape "$ODD" | grep matmul | cut -c1-75
echo "== fp8 odd, rule"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 1000x777x333,512x512x511 | grep scaled | cut -c1-75
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 1000x777x333,512x512x511 --set B_TRANS=0 | grep scaled | cut -c1-75
echo "== fp8 odd, TILEFUSE_GEMM_COPY=0"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 1000x777x333,512x512x511 | grep scaled | cut -c1-75
CE=8192x32000,4096x128256,16384x50304,2048x151936,4096x151936,1024x256000,2048x200000
for r in 1 2; do
echo "== CE heuristic round $r"; ./tilefuse-bench cross_entropy --dtype bf16,f16 --shape $CE | grep cross | cut -c1-160
echo "== CE 4 warps round $r"; ./tilefuse-bench cross_entropy --dtype bf16 --shape 2048x151936,4096x151936,1024x256000,2048x200000 --set num_warps=4 | grep cross | cut -c1-160
done
python3 peers.py --help 2>&1 | head -30
