#!/usr/bin/env bash
# Run 9: run 8's two gains (TMA store, persistent) together and alone, d128 causal N1024
# bf16 and f16, and N2048 with the diagonal first; two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c9 && export TILEFUSE_CACHE_DIR=/tmp/c9
run() { local d=$1 s=$2; shift 2; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-4s %-18s %-40s ' $d $s "$*"; timeout 60 ./tilefuse-bench attention --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | sed -E 's/  +/ /g; s/ ok BLOCK.*\(([0-9.]+) TFLOP\/s\)/ \1/' | cut -c1-120; }
for round in 1 2; do
  for d in bf16 f16; do
    for v in "" "TMA_STORE=1" "persistent=1" "TMA_STORE=1 persistent=1"; do run $d 32x16x1024x128c $v; done
  done
  for v in "" "DIAGONAL_FIRST=1 TMA_STORE=1" "DIAGONAL_FIRST=1 TMA_STORE=1 persistent=1"; do run bf16 16x16x2048x128c $v; done
done
