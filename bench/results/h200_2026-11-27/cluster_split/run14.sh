#!/usr/bin/env bash
# the whole GPU suite again with the launch trigger after grid loops (library rebuilt; test binaries as in run 10)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu > $O/test_autotune_gpu.log 2>&1; echo "test_autotune_gpu exit $? $(grep 'test cases' $O/test_autotune_gpu.log)"
ls test_* | grep -v test_autotune_gpu | xargs -P 3 -I{} sh -c "./{} > $O/{}.log 2>&1; echo \"{} exit \$? \$(grep 'test cases' $O/{}.log)\""
