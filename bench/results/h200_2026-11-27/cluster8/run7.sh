#!/usr/bin/env bash
# Norm backward spreads again, now that persistent clusters fit the GPU: heuristic / alternatives, two rounds
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench "$@" | grep -E '^[a-z_]+ ' ; }
for r in 1 2; do
echo "== round $r: heuristic"
B rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute --shape 1024x131072,2048x100000
B layernorm_bwd_recompute --shape 8192x16384,4096x32768
echo "== 8 programs of 16384, 16 warps, 1 per SM"
B rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute --shape 1024x131072,2048x100000 --set cluster=8 --set BLOCK=16384 --set num_warps=16 --set PROGRAMS_PER_SM=1
echo "== LayerNorm recompute: RMSNorm's spread"
B layernorm_bwd_recompute --shape 8192x16384 --set cluster=2 --set BLOCK=8192 --set num_warps=16 --set PROGRAMS_PER_SM=1
B layernorm_bwd_recompute --shape 4096x32768 --set cluster=4 --set BLOCK=8192 --set num_warps=8 --set PROGRAMS_PER_SM=2
B layernorm_bwd_recompute --shape 8192x16384 --set cluster=4 --set BLOCK=4096 --set num_warps=8 --set PROGRAMS_PER_SM=2
done
