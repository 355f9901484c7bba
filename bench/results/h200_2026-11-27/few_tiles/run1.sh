#!/usr/bin/env bash
# data: skinny GEMMs (decode shapes), split-K kernel times, peers
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SK=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,128x4096x4096,16x14336x4096,16x4096x14336,64x14336x4096,128x8192x8192,256x4096x14336,1024x1024x1024
for r in 1 2; do ./tilefuse-bench matmul --dtype bf16 --shape $SK | grep -E "^matmul" | cut -c1-200; done
echo "== no split"
./tilefuse-bench matmul --dtype bf16 --shape $SK --set SPLIT_K=1 | grep -E "^matmul" | cut -c1-200
P=""; for s in ${SK//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -v "epi"
echo "== ncu kernel times"
ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum ./tilefuse-bench matmul --dtype bf16 --shape 16x4096x4096,64x4096x4096,16x4096x14336,128x8192x8192,256x4096x14336 --reps 1 2>&1 | grep -E "^  [a-z_]|gpu__time|dram__" | head -120
echo "== ncu cuBLAS kernel times"
cat > /tmp/cb.py <<'PY'
import torch
for (M,N,K) in [(16,4096,4096),(64,4096,4096),(16,4096,14336),(128,8192,8192),(256,4096,14336)]:
    a=torch.randn(M,K,device='cuda',dtype=torch.bfloat16); b=torch.randn(K,N,device='cuda',dtype=torch.bfloat16)
    torch.matmul(a,b); torch.cuda.synchronize()
PY
ncu --clock-control none --metrics gpu__time_duration.sum python3 /tmp/cb.py 2>&1 | awk '/^  (nvjet|void cublas|cutlass)/{n=substr($0,1,110); keep=1; next} /gpu__time/{ if(keep) print n, $NF; keep=0 }'
