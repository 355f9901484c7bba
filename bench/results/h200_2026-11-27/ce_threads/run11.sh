#!/usr/bin/env bash
# Rows of odd widths (indexed from their aligned start) on clusters: warps x programs per
# SM around the rule, softmax and cross-entropy, bf16.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
r() { local k=$1 shape=$2 label=$3; shift 3; local sets=() a; for a in "$@"; do sets+=(--set "$a"); done
  ./tilefuse-bench $k $B --shape $shape "${sets[@]}" | grep -E "^$k" | awk -v l="$label" '{print $1, $3, $4, $6, $7, l}'; }
rule() { ./tilefuse-bench $1 $B --shape $2 | grep -E "^$1" | awk '{print $1, $3, $4, $6, $7, "rule", $8, $9, $10, $11, $12, $13, $14}'; }
for k in softmax cross_entropy; do
  for s in 4096x16383 4096x30011 2048x65537 1024x131073 8192x20001 2048x128257 4096x50257; do
    rule $k $s
    for wp in 4:6 4:7 4:8 8:3 8:4 8:5 16:2; do w=${wp%:*}; p=${wp#*:}
      r $k $s "w$w p$p" num_warps=$w min_programs_per_sm=$p; done
  done
done
