#!/usr/bin/env bash
# 8-bit decode rule (16-row tiles): GPU tests and the rule's configs
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_float8 test_gpu_gallery; do echo "$t: $(./$t 2>&1 | grep -E 'test cases|FAIL|ERROR' | head -5)"; done
for r in 1 2; do
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 1x4096x4096,8x4096x4096,16x4096x4096,16x4096x14336,16x14336x4096,1x8192x8192,64x4096x4096 | grep -E "^scaled" | cut -c1-170
done
