#!/usr/bin/env bash
# the final rule (heuristic) against the rule before it (128x256 whole tiles) on partial-wave GEMMs, measured and
# unseen shapes, the standard shapes, 8-bit; cuBLAS and torch._scaled_mm in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=640x4096x4096,768x4096x4096,1536x1536x1536,1024x5000x8192,2560x4096x4096,1100x4096x4096,1200x4096x4096,896x8192x4096,3000x3000x3000,1664x4096x4096,2048x2048x8192
W="--set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=1 --set SPLIT_TAIL=0"
for r in 1 2; do
echo "== round $r rule"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
echo "== round $r before (128x256 whole)"; ./tilefuse-bench matmul --dtype bf16 --shape $S $W | grep -E "^matmul" | cut -c1-80
done
echo "== standard shapes"; ./tilefuse-bench matmul --dtype bf16 | grep -E "^matmul" | cut -c1-150
F=640x4096x4096,1100x4096x4096,2560x4096x4096
for r in 1 2; do
echo "== round $r fp8 rule"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-200
echo "== round $r fp8 before"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F $W | grep -E "^scaled" | cut -c1-80
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
python3 peers.py gemm --dtype bf16 --no-compile 2>&1 | grep -E "cublas  "
python3 fp8_gemm_peer.py ${F//,/ } 2>&1 | tail -4
