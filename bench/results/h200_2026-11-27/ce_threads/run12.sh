#!/usr/bin/env bash
# Aligned softmax rows on 8 warps x 32 values (8192 columns per program): 4 against 5
# programs per SM; one-program odd widths at 6/7/8; two rounds.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
r() { local k=$1 shape=$2 label=$3; shift 3; local sets=() a; for a in "$@"; do sets+=(--set "$a"); done
  ./tilefuse-bench $k $B --shape $shape "${sets[@]}" | grep -E "^$k" | awk -v l="$label" '{print $1, $3, $4, $6, $7, l}'; }
rule() { ./tilefuse-bench $1 $B --shape $2 | grep -E "^$1" | awk '{print $1, $3, $4, $6, $7, "rule", $8, $9, $10, $11, $12, $13, $14}'; }
for round in 1 2; do
for s in 2048x65536 4096x128256 8192x32000 16384x32000 4096x65536; do rule softmax $s
  r softmax $s "p4" min_programs_per_sm=4; done
for s in 16384x4099 16384x4097 8192x8191; do rule softmax $s
  for p in 6 7 8; do r softmax $s "p$p" min_programs_per_sm=$p; done; done
done
