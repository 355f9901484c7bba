#!/usr/bin/env bash
# Run 8: d128 causal N1024 with the diagonal block first, around the heuristic: P.V
# rescaled early, TMA store, persistent programs; two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c8 && export TILEFUSE_CACHE_DIR=/tmp/c8
run() { local d=$1 s=$2; shift 2; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-4s %-18s %-30s ' $d $s "$*"; timeout 60 ./tilefuse-bench attention --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | sed -E 's/  +/ /g; s/ ok BLOCK.*\(([0-9.]+) TFLOP\/s\)/ \1/' | cut -c1-120; }
for round in 1 2; do
  for v in "" "RESCALE_LATE=0" "TMA_STORE=1" "persistent=1" "DIAGONAL_FIRST=0"; do run bf16 32x16x1024x128c $v; done
done
