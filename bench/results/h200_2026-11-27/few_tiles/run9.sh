#!/usr/bin/env bash
# final: the whole GPU suite on the final bundle; attention with PDL on/off (one kernel)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
O=${OUT:-/tmp}
./run-gpu-tests.sh > $O/gpu_tests_final.txt 2>&1; grep -E "^(PASS|FAIL)|summary" $O/gpu_tests_final.txt | cut -c1-100
./test_autotune_gpu -tc="*heuristic*" -s 2>&1 | grep -E "heuristic|test cases" | head -5
for pdl in 1 0; do TILEFUSE_PDL=$pdl ./tilefuse-bench attention --dtype f16 --shape 8x16x4096x128,32x16x1024x64 | grep -E "^attention" | cut -c1-110; done
