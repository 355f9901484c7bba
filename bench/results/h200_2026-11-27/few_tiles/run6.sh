#!/usr/bin/env bash
# verification: shared tile rule (bf16 + fp8), fp8 split-K; GPU tests; peers
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_float8 test_gpu_gallery test_gpu_ops test_autotune_gpu; do echo "$t: $(./$t 2>&1 | grep -E 'test cases|FAIL|ERROR' | head -5)"; done
M() { ./tilefuse-bench $1 --dtype $2 --shape $3 "${@:4}" | awk '/^(matmul|scaled)/{printf "%s=%s ", $3, $4}'; echo " <- ${*:4}"; }
STD=4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000
FEW=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,512x4096x4096,1024x1024x1024,768x768x768,2048x2048x2048
for r in 1 2; do
  echo "== round $r bf16 heuristic"
  ./tilefuse-bench matmul --dtype bf16 --shape $FEW,$STD | grep -E "^matmul" | cut -c1-175
  echo "== round $r fp8 heuristic"
  ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $FEW,$STD | grep -E "^scaled" | cut -c1-175
  echo "== round $r fp8 previous rule (64x128 4 stages where 128x256 leaves SMs idle, no split)"
  M scaled_matmul f8e4m3 1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,1024x1024x1024,768x768x768 --set SPLIT_K=1 --set BLOCK_M=64 --set BLOCK_N=128 --set num_warps=4 --set num_stages=4
done
P=""; for s in ${FEW//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
python3 fp8_gemm_peer.py ${FEW//,/ }
