#!/usr/bin/env bash
# Softmax with RELOAD (chunk-wise running max/sum, the row re-read after the exchange) on 8-program clusters, two rounds
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench softmax "$@" | grep -E '^softmax ' ; }
for r in 1 2; do
echo "== round $r: heuristic"; B --shape 1024x100000,2048x151936,1024x163840,1024x131072,4096x128256
for rl in 0 1; do
echo "== RELOAD=$rl, 8 programs"
B --shape 1024x100000 --set cluster=8 --set BLOCK=2048 --set CHUNKS=7 --set num_warps=8 --set min_programs_per_sm=3 --set RELOAD=$rl
B --shape 2048x151936,1024x163840 --set cluster=8 --set BLOCK=4096 --set CHUNKS=5 --set num_warps=8 --set min_programs_per_sm=2 --set RELOAD=$rl
B --shape 2048x151936 --set cluster=8 --set BLOCK=4096 --set CHUNKS=5 --set num_warps=16 --set min_programs_per_sm=2 --set RELOAD=$rl
B --shape 1024x131072,4096x128256 --set cluster=8 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set min_programs_per_sm=3 --set RELOAD=$rl
done
echo "== RELOAD=1 on 16 programs (heuristic spreads)"
B --shape 1024x100000 --set RELOAD=1
B --shape 2048x151936 --set RELOAD=1
done
