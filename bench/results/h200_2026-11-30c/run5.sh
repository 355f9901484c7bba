#!/usr/bin/env bash
# Run 5: the final code (DIAGONAL_FIRST in the attention heuristic): the whole GPU suite,
# memcheck of the new GPU case, and attention at every peers' shape (32768 tokens, 16
# heads; d64 and d128, N 1024 / 4096 / 16384, causal or not, bf16 and f16) against cuDNN
# in the same command.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c5 && export TILEFUSE_CACHE_DIR=/tmp/c5
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t=$SECONDS; TEST_JOBS=4 timeout 330 ./run-gpu-tests.sh 2>&1 | tail -30; echo "suite took $((SECONDS-t)) s"
t=$SECONDS; timeout 90 compute-sanitizer --tool memcheck ./test_gpu_tma -tc="*diagonal block first*" 2>&1 | grep -E "ERROR SUMMARY|test cases|assertions" | head; echo "memcheck took $((SECONDS-t)) s"
echo "#### ours"
for d in bf16 f16; do for dim in 64 128; do for c in "" c; do
  timeout 60 ./tilefuse-bench attention --dtype $d --shape 32x16x1024x${dim}$c,8x16x4096x${dim}$c,2x16x16384x${dim}$c --reps 10 2>&1 | grep -E " ok | FAIL|rror" | sed -E 's/  +/ /g; s/ ok BLOCK.*\(([0-9.]+) TFLOP\/s\)/ \1/'
done; done; done
echo "#### cuDNN"
timeout 150 python3 cudnn_attention.py 2>&1 | tail -30
