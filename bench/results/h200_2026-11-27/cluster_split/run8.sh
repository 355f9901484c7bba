#!/usr/bin/env bash
# the last column of GEMM tiles moved left to end at column N (EDGE_SHIFT_N=1) against not; rows shifted in both
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s(%s) ", $3, $4, $7}'; echo " <- $*"; }
S=512x4000x8192,4096x4000x4096,256x11000x8192,1024x5000x8192,4096x3000x8192,384x4000x8192
for r in 1 2; do
B
B --set EDGE_SHIFT_N=1
B --set B_TRANS=1
B --set B_TRANS=1 --set EDGE_SHIFT_N=1
done
S=192x8192x8192,200x8192x4096
B --set EDGE_SHIFT=0
B
./tilefuse-bench matmul --dtype bf16 --shape 200x8192x8192 | grep -E "^matmul" | cut -c1-120
