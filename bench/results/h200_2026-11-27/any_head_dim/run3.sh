#!/usr/bin/env bash
# At most two parts per head (else one power-of-two block), 128-key blocks where they
# fit: the heuristic over head dims 32-256; one block (HEAD_SPLIT=0) against parts; peers.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_tma -tc="*any head dim*" 2>&1 | tail -3
B="--dtype f16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
S=""; for d in 32 40 48 64 80 96 112 128 144 160 176 192 200 224 256; do S="$S,8x16x4096x$d"; done
echo "== heuristic f16 N4096"; tf $B --shape ${S#,}
echo "== heuristic f16 N1024, N16384, causal"; tf $B --shape 32x16x1024x80,32x16x1024x112,32x16x1024x160,2x16x16384x112,2x16x16384x160,8x16x4096x112c,8x16x4096x160c,2x16x16384x160c
ab() { echo "== $1 :: $2"; sets=""; for kv in $2; do sets="$sets --set $kv"; done; tf $B --shape $1 $sets; }
ab 8x16x4096x40,8x16x4096x80,8x16x4096x96 "HEAD_SPLIT=0"
ab 8x16x4096x160,8x16x4096x176,8x16x4096x192 "HEAD_SPLIT=0 BLOCK_N=64"
ab 8x16x4096x40 "TMA_STORE=0"
ab 8x16x4096x40,8x16x4096x48 "min_programs_per_sm=2"
ab 8x16x4096x144,8x16x4096x160 "BLOCK_N=64"
python3 peers.py attention --dtype fp16 --d 48 --d 144 --d 176 --d 200 --d 224 --n 4096 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype fp16 --d 112 --d 160 --n 4096 --causal 2>/dev/null | grep -v '^{'
python3 peers.py attention --dtype fp16 --d 80 --d 112 --d 160 --n 1024 --n 16384 2>/dev/null | grep -v '^{'
