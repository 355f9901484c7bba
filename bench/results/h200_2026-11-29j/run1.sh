#!/usr/bin/env bash
# Run 1 (the previous stop's final code, 83077f9): the whole GPU suite, four binaries at
# once; then attention d128 bf16 (ours and cuDNN, peers' shapes) as this session's baseline.
b=${1:?bundle}; out=${2:?out}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
echo "#### suite"
(cd $b && TEST_JOBS=4 timeout 330 ./run-gpu-tests.sh 2>&1 | tail -30)
s=32x16x1024x128,8x16x4096x128,8x16x4096x128c
echo "#### ours bf16"
(cd $b && LD_LIBRARY_PATH=$PWD timeout 100 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10 2>&1 | grep TFLOP)
echo "#### cudnn"
(cd $b/peers && timeout 150 python3 peers.py attention --dtype bf16 --d 128 --no-compile 2>/dev/null | grep cudnn
 timeout 150 python3 peers.py attention --dtype bf16 --d 128 --causal --no-compile 2>/dev/null | grep cudnn)
