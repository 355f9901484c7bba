#!/usr/bin/env bash
# PDL (programmatic dependent launch) + split-K reduction: whole GPU suite, then A/B
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
O=${OUT:-/tmp}
./run-gpu-tests.sh > $O/gpu_tests.txt 2>&1; tail -4 $O/gpu_tests.txt; grep -E "^(PASS|FAIL)" $O/gpu_tests.txt | cut -c1-100
SK=1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,16x4096x14336,16x14336x4096,128x8192x8192,256x4096x14336,512x4096x4096,1024x1024x1024,4096x4096x4096
for r in 1 2; do
  for pdl in 1 0; do
    echo "== round $r TILEFUSE_PDL=$pdl"
    TILEFUSE_PDL=$pdl ./tilefuse-bench matmul --dtype bf16 --shape $SK | grep -E "^matmul" | cut -c1-120
    TILEFUSE_PDL=$pdl ./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000,4096x128256,2048x151936 | grep -E "^cross" | cut -c1-120
    TILEFUSE_PDL=$pdl ./tilefuse-bench softmax,rmsnorm_bwd,layernorm_bwd --dtype bf16 --shape 16384x4096,4096x1024 | grep -E "^(softmax|rmsnorm|layernorm)" | cut -c1-120
  done
done
