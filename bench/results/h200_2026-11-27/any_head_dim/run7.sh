#!/usr/bin/env bash
# Grouped-query attention: GPU tests, and ours with key/value heads shared by 4 / 8 query
# heads against the same shapes with one key/value head per query head.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_tma test_gpu_gallery test_gpu_persistent; do echo "== $t"; ./$t 2>&1 | tail -3; done
echo "== memcheck"; compute-sanitizer --tool memcheck ./test_gpu_tma -tc="*grouped*" 2>&1 | tail -4
B="--dtype bf16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
echo "== MHA then GQA (groups 4, 8)"
tf $B --shape 8x32x4096x128,8x32x4096x128g4,8x32x4096x128g8,8x32x4096x128c,8x32x4096x128cg4,32x32x1024x128,32x32x1024x128g8,2x32x16384x128cg8,8x32x4096x64,8x32x4096x64g4,8x32x4096x96g4
