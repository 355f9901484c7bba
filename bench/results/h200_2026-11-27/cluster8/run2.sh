#!/usr/bin/env bash
# Wide 16-bit rows on clusters of 8 (93% of program slots resident) instead of 16 (85%): configs per width and kernel, two rounds
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B() { ./tilefuse-bench "$@" | grep -E '^(softmax|rmsnorm|layernorm|add_rmsnorm|cross_entropy) ' ; }
C8="--set cluster=8"
for r in 1 2; do
echo "== round $r: heuristic"
B softmax,rmsnorm,add_rmsnorm,layernorm,cross_entropy --shape 1024x100000,1024x131072,4096x128256,2048x151936,512x262144
echo "== 8 warps, 3 per SM"
B softmax,rmsnorm,add_rmsnorm,layernorm,cross_entropy --shape 1024x100000 $C8 --set BLOCK=2048 --set CHUNKS=7 --set num_warps=8 --set min_programs_per_sm=3
B softmax,rmsnorm,add_rmsnorm,layernorm,cross_entropy --shape 1024x131072,4096x128256 $C8 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set min_programs_per_sm=3
B softmax,rmsnorm,add_rmsnorm,layernorm,cross_entropy --shape 2048x151936 $C8 --set BLOCK=4096 --set CHUNKS=5 --set num_warps=8 --set min_programs_per_sm=3
echo "== norms with RELOAD, 8 warps, 3 per SM"
B rmsnorm,add_rmsnorm,layernorm --shape 1024x100000 $C8 --set BLOCK=2048 --set CHUNKS=7 --set RELOAD=1 --set num_warps=8 --set min_programs_per_sm=3
B rmsnorm,add_rmsnorm,layernorm --shape 1024x131072 $C8 --set BLOCK=8192 --set CHUNKS=2 --set RELOAD=1 --set num_warps=8 --set min_programs_per_sm=3
B layernorm --shape 1024x131072 $C8 --set BLOCK=4096 --set CHUNKS=4 --set RELOAD=1 --set num_warps=8 --set min_programs_per_sm=3
B rmsnorm,add_rmsnorm,layernorm --shape 2048x151936 $C8 --set BLOCK=4096 --set CHUNKS=5 --set RELOAD=1 --set num_warps=8 --set min_programs_per_sm=3
echo "== 16 warps, 2 per SM"
B softmax,rmsnorm,layernorm,cross_entropy --shape 1024x131072 $C8 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=16 --set min_programs_per_sm=2
B softmax,rmsnorm,layernorm,cross_entropy --shape 2048x151936 $C8 --set BLOCK=4096 --set CHUNKS=5 --set num_warps=16 --set min_programs_per_sm=2
echo "== 262144 on 8 x 32768 (16 warps)"
B softmax --shape 512x262144 $C8 --set BLOCK=8192 --set CHUNKS=4 --set num_warps=16
B rmsnorm --shape 512x262144 $C8 --set BLOCK=8192 --set CHUNKS=4 --set num_warps=16 --set RELOAD=1
done
