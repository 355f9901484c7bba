#!/usr/bin/env bash
# Final: GPU tests that run attention, memcheck of the new ones, the heuristic over head
# dims 36-256 and cuDNN / SDPA flash / Triton in the same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gpu_tma test_gpu_gallery test_gpu_persistent; do echo "== $t"; ./$t 2>&1 | tail -3; done
echo "== memcheck"; compute-sanitizer --tool memcheck ./test_gpu_tma -tc="*any head dim*,*off 16-byte*" 2>&1 | tail -4
B="--dtype f16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
S=""; for d in 36 40 44 48 56 64 72 80 88 96 112 128 144 160 176 192 224 256; do S="$S,8x16x4096x$d"; done
echo "== heuristic f16 N4096"; tf $B --shape ${S#,}
echo "== heuristic f16, other N, causal"; tf $B --shape 32x16x1024x40,32x16x1024x80,32x16x1024x96,32x16x1024x160,32x16x1024x256,2x16x16384x40,2x16x16384x80,2x16x16384x96,2x16x16384x160,2x16x16384x256,8x16x4096x40c,8x16x4096x80c,8x16x4096x96c,8x16x4096x160c,8x16x4096x256c
echo "== bf16"; tf --dtype bf16 --reps 10 --shape 8x16x4096x40,8x16x4096x80,8x16x4096x96,8x16x4096x160,8x16x4096x256
python3 peers.py attention --dtype fp16 --d 40 --d 56 --d 72 --d 80 --d 88 --d 96 --d 112 --d 144 --d 160 --d 176 --d 192 --d 256 --n 4096 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype fp16 --d 40 --d 80 --d 96 --d 160 --n 4096 --causal 2>/dev/null | grep -v '^{'
