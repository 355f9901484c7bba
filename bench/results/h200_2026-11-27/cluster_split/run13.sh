#!/usr/bin/env bash
# where a kernel lets the next one launch: after its loop over the grid (default now) / at entry / PDL off
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do
  for pdl in default entry 0; do
    echo "== round $r TILEFUSE_PDL=$pdl"
    if [ $pdl = default ]; then unset TILEFUSE_PDL; else export TILEFUSE_PDL=$pdl; fi
    ./tilefuse-bench rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd --dtype bf16 --shape 16384x4096,65536x1024,8192x16384,16384x5000 | grep -E "^(rmsnorm|add_rms|layernorm)" | cut -c1-110
    ./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000,2048x151936 | grep -E "^cross" | cut -c1-110
    ./tilefuse-bench softmax --dtype bf16 --shape 16384x4096 | grep -E "^softmax" | cut -c1-110
    ./tilefuse-bench matmul --dtype bf16 --shape 64x4096x4096,16x4096x4096 | grep -E "^matmul" | cut -c1-110
  done
done
