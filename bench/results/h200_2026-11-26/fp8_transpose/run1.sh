#!/usr/bin/env bash
# device batch 1: fp8 B [K, N] transposition, small odd bf16 GEMMs, CE vs softmax ncu
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
./test_gpu_float8 2>&1 | tail -3
S=4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000
SMALL=256x256x256,512x512x512,1024x1024x1024,64x4096x4096,128x8192x8192,1000x777x333,2048x2048x2048
for round in 1 2; do
  echo "== round $round: fp8 B [N, K]"
  ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL"
  echo "== round $round: fp8 B [K, N], transposed first (default)"
  ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL" --set B_TRANS=0
  echo "== round $round: fp8 B [K, N], in-kernel K-major copies (TILEFUSE_GEMM_COPY=0)"
  TILEFUSE_GEMM_COPY=0 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$S,$SMALL" --set B_TRANS=0
done
python3 fp8_gemm_peer.py --b-kn ${S//,/ } ${SMALL//,/ }
python3 fp8_gemm_peer.py 4096x4096x4096 1024x1024x1024 64x4096x4096
ODD=1000x777x333,512x512x511,1024x1024x1023,2048x1000x777,777x2048x1025,300x4096x4095,4096x300x999,1500x1500x1501
for round in 1 2; do
  echo "== round $round: bf16 odd, rule"
  ./tilefuse-bench matmul --dtype bf16 --shape "$ODD"
  echo "== round $round: bf16 odd, copy forced"
  TILEFUSE_GEMM_COPY=1 ./tilefuse-bench matmul --dtype bf16 --shape "$ODD"
done
echo "== ncu softmax vs cross_entropy 8192x32000 bf16"
ncu --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats -c 6 ./tilefuse-bench softmax,cross_entropy --dtype bf16 --shape 8192x32000 --reps 1 2>&1 | grep -v "^==PROF==" | grep -E "^  [a-z_]|Duration|Memory Throughput|DRAM Through|Registers|Cluster Size|Achieved Occ|Theoretical Occ|Block Size|Grid Size|Warp Cycles Per Issued|Compute \(SM\)|Waves" 
./tilefuse-bench softmax,cross_entropy --dtype bf16 --shape 8192x32000,4096x128256,16384x50304
