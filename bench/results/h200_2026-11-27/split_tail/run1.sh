#!/usr/bin/env bash
# split tail: GPU tests of the new paths (+ memcheck), then the GEMM rule against the other tilings and cuBLAS
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
./test_gpu_ops -tc="*last program*,*atomics*" 2>&1 | tail -3
./test_gpu_gallery -tc="*matmul*,*split*" 2>&1 | tail -3
./test_gpu_float8 -tc="*scaled_matmul*" 2>&1 | tail -3
echo "== memcheck"
compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*last partial wave*" 2>&1 | tail -4
compute-sanitizer --tool memcheck ./test_gpu_ops -tc="*last program*" 2>&1 | tail -4
S=640x4096x4096,768x4096x4096,1536x1536x1536,1024x5000x8192,2560x4096x4096,1100x4096x4096,4096x4096x4096
B="./tilefuse-bench matmul --dtype bf16 --shape $S"
for r in 1 2; do
echo "== round $r heuristic"; $B | grep -E "^matmul" | cut -c1-200
echo "== round $r wide whole"; $B --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-120
echo "== round $r narrow whole"; $B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-120
echo "== round $r narrow tail 4"; $B --set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6 --set SPLIT_K=4 --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-120
echo "== round $r wide tail 4"; $B --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=4 --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-120
done
K=64x4096x4096,128x4096x4096,16x4096x4096,256x4096x14336
for r in 1 2; do
echo "== round $r skinny heuristic (second kernel)"; ./tilefuse-bench matmul --dtype bf16 --shape $K | grep -E "^matmul" | cut -c1-200
echo "== round $r skinny in-kernel (SPLIT_TAIL=2)"; ./tilefuse-bench matmul --dtype bf16 --shape $K --set SPLIT_TAIL=2 | grep -E "^matmul" | cut -c1-120
done
F=640x4096x4096,1536x1536x1536,1024x5000x8192
for r in 1 2; do
echo "== round $r fp8 heuristic"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-200
echo "== round $r fp8 wide whole"; ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F --set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4 --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^scaled" | cut -c1-120
done
P=""; for s in ${S//,/ } ${K//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
python3 fp8_gemm_peer.py ${F//,/ } 2>&1 | tail -4
