#!/usr/bin/env bash
# The whole GPU suite: test_gpu_tma, test_gpu_gallery and test_gpu_persistent (the tests
# that run the attention kernel) built from this stop's final commit, the other 17 from
# the previous stop's final build (their kernels and the compiler did not change) against
# this commit's library. The tuner's test alone, the rest three at a time.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu > $O/test_autotune_gpu.log 2>&1; echo "test_autotune_gpu exit $? $(grep 'test cases' $O/test_autotune_gpu.log)"
ls test_* | grep -v test_autotune_gpu | xargs -P 3 -I{} sh -c "./{} > $O/{}.log 2>&1; echo \"{} exit \$? \$(grep 'test cases' $O/{}.log)\""
