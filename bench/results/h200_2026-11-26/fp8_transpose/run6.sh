#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== test_gpu_cross_entropy"; ./test_gpu_cross_entropy 2>&1 | tail -2
CE=8192x32000,4096x128256,2048x151936,16384x50304,8192x32001,4096x50257,2048x128257,4096x151936,1024x256000
for r in 1 2; do
echo "== CE new round $r"; ./tilefuse-bench cross_entropy --dtype bf16 --shape $CE | grep cross | cut -c1-160
echo "== CE old round $r"; ./tilefuse-bench-old cross_entropy --dtype bf16 --shape $CE | grep cross | cut -c1-160
done
echo "== CE new f16/f32"; ./tilefuse-bench cross_entropy --dtype f16,f32 --shape 8192x32000,4096x128256,2048x151936 | grep cross | cut -c1-160
echo "== CE old f16/f32"; ./tilefuse-bench-old cross_entropy --dtype f16,f32 --shape 8192x32000,4096x128256,2048x151936 | grep cross | cut -c1-160
python3 peers.py cross_entropy --shape 8192x32000 --shape 4096x128256 --shape 2048x151936 --shape 16384x50304 2>&1 | tail -12
echo "== CE new after peers"; ./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000,4096x128256,2048x151936,16384x50304 | grep cross | cut -c1-160
