#!/usr/bin/env bash
# Attention at heads that are not powers of two (parts) and 192 / 256 on 64-key blocks:
# GPU tests, our heuristic, tilings A/B, the peers (SDPA flash, cuDNN, Triton).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_tma -tc="*any head dim*,*head-dim-128*" 2>&1 | tail -3
./test_gpu_gallery -tc="*attention*" 2>&1 | tail -3
B="--dtype f16 --reps 10"
S=32x16x1024x96,8x16x4096x96,2x16x16384x96,8x16x4096x96c,2x16x16384x96c,8x16x4096x80,8x16x4096x32,32x16x1024x256,8x16x4096x192,8x16x4096x256,8x16x4096x256c,2x16x16384x256c,8x16x4096x64,8x16x4096x128
echo "== heuristic"; ./tilefuse-bench attention $B --shape $S | cut -c1-160
ab() { echo "== $1 :: $2"; sets=""; for kv in $2; do sets="$sets --set $kv"; done; ./tilefuse-bench attention $B --shape $1 $sets | grep -v "^#" | cut -c1-100; }
ab 8x16x4096x96,8x16x4096x80 "BLOCK_M=64 num_warps=4 min_programs_per_sm=2"
ab 8x16x4096x96,8x16x4096x80 "BLOCK_N=64"
ab 8x16x4096x96 "PV_LAG=0"
ab 8x16x4096x256,8x16x4096x192 "BLOCK_N=32"
ab 8x16x4096x256,8x16x4096x192 "BLOCK_M=64 num_warps=4"
ab 8x16x4096x256 "PV_LAG=0"
ab 8x16x4096x256 "num_stages=1"
python3 peers.py attention --dtype fp16 --d 32 --d 80 --d 96 --d 192 --d 256 --n 1024 --n 4096 --n 16384 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype fp16 --d 96 --d 256 --n 4096 --n 16384 --causal 2>/dev/null | grep -v '^{'
