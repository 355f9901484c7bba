#!/usr/bin/env bash
# the whole GPU suite on the final bundle (the tuner's test alone, the rest three at a time), memcheck of the new tests
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu > $O/test_autotune_gpu.log 2>&1; echo "test_autotune_gpu exit $? $(grep 'test cases' $O/test_autotune_gpu.log)"
ls test_* | grep -v test_autotune_gpu | xargs -P 3 -I{} sh -c "./{} > $O/{}.log 2>&1; echo \"{} exit \$? \$(grep 'test cases' $O/{}.log)\""
echo "== memcheck: the split tail (16-bit and 8-bit), ordered atomics"
compute-sanitizer --tool memcheck ./test_gpu_gallery -tc="*last partial wave*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
compute-sanitizer --tool memcheck ./test_gpu_float8 -tc="*last partial wave*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
compute-sanitizer --tool memcheck ./test_gpu_ops -tc="*last program*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
