#!/usr/bin/env bash
# Heads of 33-96 columns off 128 bytes a row: 128-row tiles (half the K/V copies per
# MMA of the 64-row ones) with blocks from column 0 (HEAD_SPLIT=1) or ending at the head (2).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype f16 --reps 10"
tf() { ./tilefuse-bench attention "$@" | grep "^attention" | awk '{split($3,s,"x"); c=index(s[4],"c")>0; d=s[4]+0; f=4*s[1]*s[2]*s[3]*s[3]*d*(c?0.5:1); printf "%s %s %s %.1f us %.1f TFLOP/s %s %s\n", $1, $2, $3, $4, f/$4/1e6, $7, substr($0, index($0, $8))}'; }
S=""; for d in 40 48 56 64 72 80 88 96; do S="$S,8x16x4096x$d"; done
ab() { echo "== $1 :: $2"; sets=""; for kv in $2; do sets="$sets --set $kv"; done; tf $B --shape $1 $sets; }
for split in 1 2; do
  ab ${S#,} "HEAD_SPLIT=$split BLOCK_M=128 num_warps=8 min_programs_per_sm=0 TMA_STORE=0"
  ab ${S#,} "HEAD_SPLIT=$split BLOCK_M=128 num_warps=8 min_programs_per_sm=0 TMA_STORE=0 BLOCK_N=64"
done
ab 32x16x1024x40,32x16x1024x56,32x16x1024x72,2x16x16384x40,2x16x16384x56,8x16x4096x40c,8x16x4096x56c "BLOCK_M=128 num_warps=8 min_programs_per_sm=0 TMA_STORE=0"
ab 32x16x1024x40,32x16x1024x56,32x16x1024x72,2x16x16384x40,2x16x16384x56,8x16x4096x40c,8x16x4096x56c ""
echo "== ncu: L2 and TMA at d56 / d64, 64-row tiles"
for d in 56 64; do
  ncu --clock-control none -k regex:attention --launch-skip 3 --launch-count 1 --metrics lts__t_sectors_op_read.sum,lts__t_bytes.sum.per_second,l1tex__m_xbar2l1tex_read_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum ./tilefuse-bench attention $B --shape 8x16x4096x$d --reps 2 2>&1 | grep -E "lts__|l1tex__|sm__|gpu__" 
done
