#!/usr/bin/env bash
# The 8-bit GEMM against torch._scaled_mm (cuBLASLt) in one run, with the bf16 GEMM on the
# same shapes for scale. Run from the bundle: bash fp8_gemm.sh
set -u
shapes=${SHAPES:-4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000}
./tilefuse-bench scaled_matmul --dtype f8e4m3,f8e5m2 --shape "$shapes"
./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape "$shapes" --set PRECISE_ACC=2
./tilefuse-bench matmul --dtype bf16 --shape "$shapes" --set B_TRANS=1
python3 fp8_gemm_peer.py ${shapes//,/ }
