#!/usr/bin/env bash
# decode rule: 16-row tiles for M <= 16; gallery GPU test; cuBLAS
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_gallery 2>&1 | grep -E "test cases|FAIL|ERROR" | head -5
S=1x4096x4096,4x4096x4096,8x4096x4096,16x4096x4096,16x4096x14336,16x14336x4096,1x8192x8192,16x8192x8192,8x4096x11008,8x11008x4096
for r in 1 2; do for bt in 0 1; do
  echo "== round $r B_TRANS=$bt"
  ./tilefuse-bench matmul --dtype bf16 --shape $S --set B_TRANS=$bt | grep -E "^matmul" | cut -c1-175
done; done
echo "== previous rule (64x64 wgmma tiles x 6 stages, 4 slices), 4096x4096 and x14336"
for bt in 0 1; do
./tilefuse-bench matmul --dtype bf16 --shape 1x4096x4096,4x4096x4096,8x4096x4096,16x4096x4096,16x4096x14336,8x4096x11008 --set B_TRANS=$bt --set BLOCK_M=64 --set BLOCK_N=64 --set num_stages=6 --set SPLIT_K=4 | awk '/^matmul/{printf "%s=%s ", $3, $4}'; echo " <- B_TRANS=$bt"
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
