#!/usr/bin/env bash
# 8-bit decode GEMMs: 16-row (mma.sync) tiles against the shared wgmma rule
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
M() { ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $S "$@" | awk '/^scaled/{printf "%s=%s%s ", $3, $4, ($7=="FAIL")?"!":""}'; echo " <- $*"; }
S=1x4096x4096,8x4096x4096,16x4096x4096,16x4096x14336,16x14336x4096,1x8192x8192
for r in 1 2; do
M
for cfg in "16 64 128 4 4 4" "16 64 128 4 4 8" "16 128 128 4 4 4" "16 64 64 4 4 4" "16 64 256 4 3 4" "16 32 128 2 4 4"; do
  set -- $cfg
  M --set BLOCK_M=$1 --set BLOCK_N=$2 --set BLOCK_K=$3 --set num_warps=$4 --set num_stages=$5 --set SPLIT_K=$6
done
done
python3 fp8_gemm_peer.py ${S//,/ } | grep "fast_accum=True"
