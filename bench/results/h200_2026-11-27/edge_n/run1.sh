#!/usr/bin/env bash
# The last column of tiles moved left to end at N (EDGE_SHIFT_N, default on) against off; cuBLAS in the same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=3000x3000x3000,4096x3000x8192,4096x3000x4096,4096x2904x4096,4000x4000x4000,1024x5000x8192,4096x1000x4096,8192x5000x4096,2048x6000x8192
for r in 1 2; do
echo "== round $r shift on (default)"; ./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-200
echo "== round $r shift off"; ./tilefuse-bench matmul --dtype bf16 --shape $S --set EDGE_SHIFT_N=0 | grep -E "^matmul" | cut -c1-90
done
T=3000x3000x3000,4096x3000x8192,4000x4000x4000
echo "== B_TRANS=1 on / off"
./tilefuse-bench matmul --dtype bf16 --shape $T --set B_TRANS=1 | grep -E "^matmul" | cut -c1-90
./tilefuse-bench matmul --dtype bf16 --shape $T --set B_TRANS=1 --set EDGE_SHIFT_N=0 | grep -E "^matmul" | cut -c1-90
echo "== 8-bit on / off (B [N, K]), then B [K, N] on / off"
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $T | grep -E "^scaled" | cut -c1-200
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $T --set EDGE_SHIFT_N=0 | grep -E "^scaled" | cut -c1-90
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $T --set B_TRANS=0 | grep -E "^scaled" | cut -c1-90
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $T --set B_TRANS=0 --set EDGE_SHIFT_N=0 | grep -E "^scaled" | cut -c1-90
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
