#!/usr/bin/env bash
# the GEMM rule with 128x128 x 6-stage tiles (new) against the rule before it (old binary), cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=300x4096x4096,384x4096x4096,512x4096x4096,512x4096x14336,256x8192x8192,256x8192x4096,200x8192x8192,100x16384x4096,2048x1024x4096,1024x2048x2048,1536x1536x1536,4096x4096x4096
F=384x4096x4096,512x4096x4096,512x4096x14336,256x8192x8192,1024x2048x2048,4096x4096x4096
for r in 1 2; do
echo "== round $r new"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-190
echo "== round $r old"; ./tilefuse-bench-old matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-190
echo "== round $r fp8 new"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-190
echo "== round $r fp8 old"; ./tilefuse-bench-old scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-190
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
python3 fp8_gemm_peer.py ${F//,/ } 2>&1 | tail -8
