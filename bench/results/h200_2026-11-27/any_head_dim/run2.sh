#!/usr/bin/env bash
# Heads of 65-127 columns on one warpgroup (64 rows, two programs per SM): the heuristic
# across N and causal, against d128's tiling; d128 itself on that tiling; the peers at
# the head dims run1.sh did not cover.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_tma -tc="*any head dim*" 2>&1 | tail -3
B="--dtype f16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
S=32x16x1024x96,8x16x4096x96,2x16x16384x96,8x16x4096x96c,2x16x16384x96c,32x16x1024x80,8x16x4096x80,2x16x16384x80,8x16x4096x80c,8x16x4096x112,8x16x4096x40,8x16x4096x48,8x16x4096x160,32x16x1024x192,2x16x16384x192
echo "== heuristic f16"; tf $B --shape $S
echo "== heuristic bf16"; tf --dtype bf16 --reps 10 --shape 8x16x4096x96,8x16x4096x256,8x16x4096x80
ab() { echo "== $1 :: $2"; sets=""; for kv in $2; do sets="$sets --set $kv"; done; tf $B --shape $1 $sets; }
ab 32x16x1024x96,8x16x4096x96,2x16x16384x96,8x16x4096x96c,2x16x16384x96c,8x16x4096x80,8x16x4096x112 "BLOCK_M=128 num_warps=8 min_programs_per_sm=0 TMA_STORE=0"
ab 8x16x4096x96,8x16x4096x80 "TMA_STORE=0"
ab 32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c "BLOCK_M=64 num_warps=4 min_programs_per_sm=2 TMA_STORE=1"
ab 8x16x4096x192,32x16x1024x192,8x16x4096x160 "num_stages=3"
ab 8x16x4096x160,32x16x1024x160 "BLOCK_N=128"
echo "== d128 heuristic"; tf $B --shape 32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c
python3 peers.py attention --dtype fp16 --d 40 --d 112 --d 160 --n 4096 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype fp16 --d 80 --d 96 --n 4096 --causal 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype bf16 --d 96 --d 256 --d 80 --n 4096 2>/dev/null | grep -v '^{'
