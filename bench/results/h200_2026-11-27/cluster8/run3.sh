#!/usr/bin/env bash
# Wide 16-bit rows on 8-program clusters (eight_program_cluster): heuristic before (tilefuse-bench-old) / after, bf16 and f16, two rounds; peers; GPU test + memcheck
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=2048x65537,1024x100000,4096x128256,1024x131072,2048x151936,1024x163840,2048x65536
K=softmax,rmsnorm,add_rmsnorm,layernorm,layernorm_stats
for r in 1 2; do for d in bf16 f16; do
echo "== round $r $d: before"; ./tilefuse-bench-old $K --dtype $d --shape $S | grep -E '^[a-z_]+ '
echo "== round $r $d: after"; ./tilefuse-bench $K --dtype $d --shape $S | grep -E '^[a-z_]+ '
done; done
echo "== peers (bf16)"
python3 peers.py rmsnorm --shape 1024x100000 --shape 1024x131072 --shape 2048x151936 2>&1 | tail -12
python3 peers.py softmax --shape 1024x131072 --shape 4096x128256 2>&1 | tail -12
echo "== GPU test"
./test_gpu_row_chunks 2>&1 | tail -3
compute-sanitizer --tool memcheck ./test_gpu_row_chunks -tc="*clusters of 8*" 2>&1 | tail -4
