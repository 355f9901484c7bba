#!/usr/bin/env bash
# split tail as two launches (the GEMM's kernel for the whole tiles, the tail kernel for the slices): tests, then S and tilings
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_gallery -tc="*matmul*,*split*" 2>&1 | tail -2
./test_gpu_float8 -tc="*scaled_matmul*" 2>&1 | tail -2
./test_gpu_ops -tc="*last program*,*atomics*" 2>&1 | tail -2
compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*last partial wave*" 2>&1 | tail -2
N="--set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6"
W="--set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4"
B="./tilefuse-bench matmul --dtype bf16 --shape 640x4096x4096,768x4096x4096,1536x1536x1536,1024x5000x8192,2560x4096x4096,1100x4096x4096"
for r in 1 2; do
echo "== round $r wide whole"; $B $W --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
echo "== round $r narrow whole"; $B $N --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
for s in 2 4 8; do echo "== round $r narrow tail $s"; $B $N --set SPLIT_K=$s --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-70; done
for s in 2 4 8; do echo "== round $r wide tail $s"; $B $W --set SPLIT_K=$s --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-70; done
echo "== round $r narrow tail 4, FIXUP_LOOP=0"; $B $N --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=0 | grep -E "^matmul" | cut -c1-70
echo "== round $r 1408x1536x4096: whole / all split 4 (SPLIT_TAIL=8) loop / unrolled"
./tilefuse-bench matmul --dtype bf16 --shape 1408x1536x4096 $N --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
./tilefuse-bench matmul --dtype bf16 --shape 1408x1536x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=8 | grep -E "^matmul" | cut -c1-70
./tilefuse-bench matmul --dtype bf16 --shape 1408x1536x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=8 --set FIXUP_LOOP=0 | grep -E "^matmul" | cut -c1-70
echo "== round $r skinny: heuristic (second kernel) / SPLIT_TAIL=2"
./tilefuse-bench matmul --dtype bf16 --shape 64x4096x4096,128x4096x4096,256x4096x14336 | grep -E "^matmul" | cut -c1-70
./tilefuse-bench matmul --dtype bf16 --shape 64x4096x4096,128x4096x4096,256x4096x14336 --set SPLIT_TAIL=2 | grep -E "^matmul" | cut -c1-70
done
