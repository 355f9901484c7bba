#!/usr/bin/env bash
# the whole GPU suite on the bundle of the final commit: the tuner's test alone (it times
# kernels), the other binaries three at a time
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu > $O/test_autotune_gpu.log 2>&1; echo "test_autotune_gpu exit $? $(grep 'test cases' $O/test_autotune_gpu.log)"
ls test_* | grep -v test_autotune_gpu | xargs -P 3 -I{} sh -c "./{} > $O/{}.log 2>&1; echo \"{} exit \$? \$(grep 'test cases' $O/{}.log)\""
