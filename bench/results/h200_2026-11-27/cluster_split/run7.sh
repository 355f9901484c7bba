#!/usr/bin/env bash
# the last row of GEMM tiles moved up to end at row M (EDGE_SHIFT=1: no A block past M) against the rule
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench matmul --dtype bf16 --shape $S "$@" | awk '/^matmul/{printf "%s=%s(%s) ", $3, $4, $6}'; echo " <- $*"; }
S=192x8192x8192,200x8192x8192,224x8192x8192,256x8192x8192,200x8192x4096,300x4096x4096,1000x4096x4096,1000x4096x14336,3000x4096x4096,4000x4096x4096
for r in 1 2; do
B
B --set EDGE_SHIFT=1
done
