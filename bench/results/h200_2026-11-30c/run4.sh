#!/usr/bin/env bash
# Run 4: causal attention with the diagonal block first (DIAGONAL_FIRST=1: blocks in
# descending order, the masked diagonal block starts the P.V-behind pipeline) against the
# heuristic's order (unmasked blocks, then the diagonal after the loop), peers' shapes
# (32768 tokens, 16 heads), alternated, two rounds; cuDNN in the same command.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c4 && export TILEFUSE_CACHE_DIR=/tmp/c4
run() { local d=$1 s=$2; shift 2; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-4s %-18s %-22s ' $d $s "$*"; timeout 60 ./tilefuse-bench attention --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=$3=""; print}' | cut -c1-220; }
for round in 1 2; do
  echo "#### round $round"
  for dim in 128 64; do for s in 32x16x1024 16x16x2048 8x16x4096 2x16x16384; do for d in bf16; do
    run $d ${s}x${dim}c DIAGONAL_FIRST=0; run $d ${s}x${dim}c DIAGONAL_FIRST=1
  done; done; done
  run f16 32x16x1024x128c DIAGONAL_FIRST=0; run f16 32x16x1024x128c DIAGONAL_FIRST=1
  run f16 32x16x1024x64c DIAGONAL_FIRST=0; run f16 32x16x1024x64c DIAGONAL_FIRST=1
done
echo "#### cuDNN"
timeout 200 python3 peers.py attention --dtype bf16 --d 64 --d 128 --n 1024 --n 2048 --causal 2>&1 | grep -i -E "cudnn|error" | head -20
