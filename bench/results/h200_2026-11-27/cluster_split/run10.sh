#!/usr/bin/env bash
# final: the whole GPU suite on the bundle of the last code (the tuner's test alone, the rest three
# at a time), memcheck of the tests added this stop, the standard GEMM shapes with cuBLAS
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu > $O/test_autotune_gpu.log 2>&1; echo "test_autotune_gpu exit $? $(grep 'test cases' $O/test_autotune_gpu.log)"
ls test_* | grep -v test_autotune_gpu | xargs -P 3 -I{} sh -c "./{} > $O/{}.log 2>&1; echo \"{} exit \$? \$(grep 'test cases' $O/{}.log)\""
echo "== memcheck: tile cluster reductions, split-K in a cluster or by a second kernel, the row shift (gallery GEMM)"
compute-sanitizer --tool memcheck ./test_gpu_cluster_combine -tc="*tiles*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*split-K slices*,*matmul*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
echo "== standard GEMM shapes (bf16, then 8-bit) and cuBLAS"
./tilefuse-bench matmul --dtype bf16 | grep -E "^matmul" | cut -c1-150
./tilefuse-bench scaled_matmul --dtype f8e4m3 | grep -E "^scaled" | cut -c1-150
python3 peers.py gemm --dtype bf16 --no-compile 2>&1 | grep -E "cublas  "
