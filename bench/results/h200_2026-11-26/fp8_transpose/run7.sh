#!/usr/bin/env bash
# GEMM tiles at shapes whose default tiling leaves SMs idle
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=1024x1024x1024,2048x2048x2048,64x4096x4096,128x8192x8192,512x4096x4096,4096x1024x1024,256x4096x14336,2048x2048x1024
for dt in bf16 f8e4m3; do
  k=matmul; extra=""; [ $dt = f8e4m3 ] && { k=scaled_matmul; extra=""; }
  echo "== $dt heuristic"; ./tilefuse-bench $k --dtype $dt --shape $S $extra | grep -E "^(matmul|scaled)" | cut -c1-150
  for cfg in "BLOCK_N=128 num_warps=4" "BLOCK_N=128 num_warps=8" "BLOCK_N=64 num_warps=4" "BLOCK_M=64 BLOCK_N=128 num_warps=4" "BLOCK_M=64 BLOCK_N=64 num_warps=4" "BLOCK_M=64 BLOCK_N=256 num_warps=4"; do
    sets=""; for kv in $cfg; do sets="$sets --set $kv"; done
    echo "== $dt $cfg"; ./tilefuse-bench $k --dtype $dt --shape $S $extra $sets | grep -E "^(matmul|scaled)" | cut -c1-75
  done
done
python3 peers.py gemm --dtype bf16 --shape 1024x1024x1024 --shape 2048x2048x2048 --shape 64x4096x4096 --shape 128x8192x8192 --shape 512x4096x4096 --shape 4096x1024x1024 --shape 256x4096x14336 --shape 2048x2048x1024 2>&1 | grep -A40 "# summary" | grep -v "GELU\|gelu"
