#!/usr/bin/env bash
# Heads off 16 columns: the second block ending at the head (HEAD_SPLIT=2, no copy reads
# past the head) against blocks from column 0 rounded up (HEAD_SPLIT=1) and one block (0).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_tma -tc="*any head dim*" 2>&1 | tail -3
B="--dtype f16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
S=""; for d in 36 40 44 48 56 72 80 88 104 112 120 136 176 200 224; do S="$S,8x16x4096x$d"; done
S0=""; for d in 36 40 44 56 72 88 104 120; do S0="$S0,8x16x4096x$d"; done
for split in 1 2 1 2; do echo "== HEAD_SPLIT=$split"; tf $B --shape ${S#,} --set HEAD_SPLIT=$split; done
echo "== HEAD_SPLIT=0"; tf $B --shape ${S0#,} --set HEAD_SPLIT=0
