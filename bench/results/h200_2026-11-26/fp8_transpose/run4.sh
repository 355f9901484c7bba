#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
./test_gpu_float8 2>&1 | tail -3
S=4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000
SMALL=1024x1024x1024,64x4096x4096,128x8192x8192,1000x777x333,2048x2048x2048
echo "== fp8 B [N, K]"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL" | grep scaled
echo "== fp8 B [K, N], transposed first"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL" --set B_TRANS=0 | grep scaled
python3 fp8_gemm_peer.py --b-kn ${S//,/ } ${SMALL//,/ }
python3 fp8_gemm_peer.py ${S//,/ } ${SMALL//,/ }
echo "== fp8 B [K, N], transposed first (round 2)"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL" --set B_TRANS=0 | grep scaled
ODD=256x256x255,384x384x383,128x1024x1023,1024x128x1023,512x512x511,1000x777x333,200x3000x999
for round in 1 2; do
  echo "== round $round: bf16 odd, no copy"; TILEFUSE_GEMM_COPY=0 ./tilefuse-bench matmul --dtype bf16 --shape "$ODD" | grep matmul | cut -c1-75
  echo "== round $round: bf16 odd, copy forced"; TILEFUSE_GEMM_COPY=1 ./tilefuse-bench matmul --dtype bf16 --shape "$ODD" | grep matmul | cut -c1-75
done
CE=8192x32000,4096x128256,16384x50304,2048x151936
echo "== CE heuristic"; ./tilefuse-bench cross_entropy --dtype bf16 --shape $CE | grep cross
for w in 4 8; do for mp in 0 4 6; do
  echo "== CE num_warps=$w min_programs_per_sm=$mp"; ./tilefuse-bench cross_entropy --dtype bf16 --shape $CE --set num_warps=$w --set min_programs_per_sm=$mp | grep cross
done; done
echo "== CE softmax-like 8192x32000"; ./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000 --set BLOCK=8192 --set CHUNKS=1 --set num_warps=8 --set cluster=4 --set min_programs_per_sm=5 | grep cross
./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000 --set BLOCK=8192 --set CHUNKS=1 --set num_warps=4 --set cluster=4 --set min_programs_per_sm=5 | grep cross
echo "== CE 4096x128256 softmax-like"; ./tilefuse-bench cross_entropy --dtype bf16 --shape 4096x128256 --set BLOCK=8192 --set num_warps=8 --set cluster=16 --set min_programs_per_sm=5 | grep cross
echo "== softmax heuristic"; ./tilefuse-bench softmax --dtype bf16 --shape $CE | grep softmax
