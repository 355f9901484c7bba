#!/usr/bin/env bash
# 1) cluster residency by cluster size; 2) wide rows at clusters of 8 vs 16; 3) last stop's warps rule on the GPU
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
nvcc -O2 -arch=sm_90a occ.cu -o occ && ./occ
B=./tilefuse-bench
echo "== softmax 1024x131072: cluster 16 x 8192 (heuristic) / 8 x 2 x 8192"
for r in 1 2; do
$B softmax --shape 1024x131072,4096x128256 | tail -n +1
$B softmax --shape 1024x131072,4096x128256 --set cluster=8 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set min_programs_per_sm=3
$B rmsnorm,cross_entropy --shape 1024x131072,4096x128256
$B rmsnorm --shape 1024x131072,4096x128256 --set cluster=8 --set BLOCK=8192 --set CHUNKS=2 --set RELOAD=1 --set num_warps=8 --set min_programs_per_sm=3
$B cross_entropy --shape 1024x131072,4096x128256 --set cluster=8 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set min_programs_per_sm=3
done
echo "== one-tile rows: heuristic (16 values per thread) / old warps"
for r in 1 2; do
$B softmax,rmsnorm --shape 16384x4096,32768x2048
$B softmax,rmsnorm --shape 16384x4096 --set num_warps=4
$B softmax,rmsnorm --shape 32768x2048 --set num_warps=2
done
echo "== GPU tests"
for t in test_gpu_row_chunks test_gpu_gallery; do s=$(date +%s); r=$(timeout 300 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)"; done
