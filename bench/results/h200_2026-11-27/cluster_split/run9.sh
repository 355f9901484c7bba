#!/usr/bin/env bash
# the last column of tiles moved left to end at N rounded up to 64 columns (EDGE_SHIFT_N=1: no TMA box wholly past N), B [K, N]
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s(%s) ", $3, $4, $7}'; echo " <- $*"; }
S=4096x3000x8192,1024x5000x8192,4096x4000x4096,512x4000x8192,4096x2900x4096,4096x3000x4096
for r in 1 2; do
B
B --set EDGE_SHIFT_N=1
B --set B_TRANS=1
done
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
