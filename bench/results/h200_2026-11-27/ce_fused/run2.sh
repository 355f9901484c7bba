#!/usr/bin/env bash
# Cross-entropy and softmax (bf16) at the same row spreads: cluster x BLOCK x CHUNKS,
# warps, programs per SM.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
run() { shape=$1; shift; sets=""; for kv in "$@"; do sets="$sets --set $kv"; done
  ./tilefuse-bench cross_entropy,softmax $B --shape $shape $sets | grep -E '^(cross|softmax)' | awk '{print $1, $3, $4, $7, $9, $10, $11, $12, $13, $14, $15}'; }
for p in 4 5 6; do for w in 4 8; do
  run 8192x32000 BLOCK=8192 cluster=4 num_warps=$w min_programs_per_sm=$p
  run 8192x32000 BLOCK=4096 cluster=8 num_warps=$w min_programs_per_sm=$p
  run 8192x32000 BLOCK=2048 cluster=16 num_warps=$w min_programs_per_sm=$p
  run 16384x50304 BLOCK=1024 CHUNKS=7 cluster=8 num_warps=$w min_programs_per_sm=$p
  run 16384x50304 BLOCK=2048 CHUNKS=7 cluster=4 num_warps=$w min_programs_per_sm=$p
  run 4096x128256 BLOCK=8192 cluster=16 num_warps=$w min_programs_per_sm=$p
  run 2048x151936 BLOCK=2048 CHUNKS=5 cluster=16 num_warps=$w min_programs_per_sm=$p
done; done
