#!/usr/bin/env bash
# Norm backward persistent clusters sized by cuOccupancyMaxActiveClusters: before (tilefuse-bench-old) / after, two rounds; GPU tests, memcheck
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=8192x16384,4096x32768,2048x65536,1024x131072,2048x100000
K=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
for r in 1 2; do
echo "== round $r: before"; ./tilefuse-bench-old $K --shape $S | grep -E '^[a-z_]+ '
echo "== round $r: after"; ./tilefuse-bench $K --shape $S | grep -E '^[a-z_]+ '
done
echo "== f16 after / before"; ./tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f16 --shape 2048x65536,1024x131072 | grep -E '^[a-z_]+ '
./tilefuse-bench-old rmsnorm_bwd,layernorm_bwd --dtype f16 --shape 2048x65536,1024x131072 | grep -E '^[a-z_]+ '
echo "== GPU tests"
for t in test_gpu_norms_backward test_gpu_row_chunks; do s=$(date +%s); r=$(timeout 300 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)"; done
compute-sanitizer --tool memcheck ./test_gpu_norms_backward -tc="*resident at once*" 2>&1 | tail -3
