#!/usr/bin/env bash
# The final rule (rows of a multiple of 8 columns only): unaligned widths unchanged (before / after), the GPU test and memcheck, peers
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=2048x65537,1024x100002,2048x151937
for r in 1 2; do
echo "== before"; ./tilefuse-bench-old rmsnorm,add_rmsnorm,layernorm --shape $S | grep -E '^[a-z_]+ '
echo "== after"; ./tilefuse-bench rmsnorm,add_rmsnorm,layernorm --shape $S | grep -E '^[a-z_]+ '
done
echo "== GPU test"
./test_gpu_row_chunks 2>&1 | tail -3
compute-sanitizer --tool memcheck ./test_gpu_row_chunks -tc="*clusters of 8*" 2>&1 | tail -4
echo "== peers (bf16)"
timeout 240 python3 peers.py rmsnorm --shape 1024x100000 --shape 1024x131072 --shape 2048x151936 2>&1 | tail -14
timeout 100 python3 peers.py softmax --no-compile --shape 1024x131072 --shape 4096x128256 2>&1 | tail -10
