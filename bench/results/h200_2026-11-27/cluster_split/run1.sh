#!/usr/bin/env bash
# split-K slices added in a cluster (one kernel) vs partials + a second kernel, cuBLAS in the same command;
# the GPU tests of the new paths first
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_cluster_combine test_gpu_gallery test_gpu_float8; do
  echo "== $t"; ./$t 2>&1 | grep -E "ERROR|FAILED|failed|Status|test cases" | head -20
done
S=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,1024x1024x1024,768x768x768,512x4096x4096,1x8192x8192,32x11008x4096
for r in 1 2; do
echo "== round $r: rule, slices in a cluster (default)"
./tilefuse-bench matmul --dtype bf16 --shape $S | grep -E "^matmul" | cut -c1-175
echo "== round $r: rule, SPLIT_CLUSTER=0 (partials + reduction kernel)"
./tilefuse-bench matmul --dtype bf16 --shape $S --set SPLIT_CLUSTER=0 | grep -E "^matmul" | cut -c1-175
done
echo "== fp8 e4m3: cluster / SPLIT_CLUSTER=0"
F=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,16x4096x14336,1x8192x8192,1024x1024x1024
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F | grep -E "^scaled" | cut -c1-175
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape $F --set SPLIT_CLUSTER=0 | grep -E "^scaled" | cut -c1-175
P=""; for s in ${S//,/ }; do P="$P --shape $s"; done
python3 peers.py gemm --dtype bf16 --no-compile $P 2>&1 | grep -E "cublas  "
