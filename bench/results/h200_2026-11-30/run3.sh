#!/usr/bin/env bash
# Run 3: f32 norms on rows of 262144 columns (clusters of 16 programs of 16384 columns,
# 58-67% of copy in run 2) and f32 LayerNorm on 8192-column programs (82-88%): the
# heuristic's config against chunks, chunks held in shared memory (HELD), RELOAD and
# programs per SM, by --set; two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD
mkdir -p /tmp/cc && export TILEFUSE_CACHE_DIR=/tmp/cc
run() { local k=$1 s=$2; shift 2; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-12s %-40s ' "$k" "$*"; timeout 60 ./tilefuse-bench $k --dtype f32 --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{print $3, $4, $5, $6}'; }
wide=(""
  "BLOCK=16384 HELD=1"
  "BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8"
  "BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 min_programs_per_sm=3"
  "BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8"
  "BLOCK=8192 CHUNKS=2 num_warps=8 min_programs_per_sm=2"
  "BLOCK=8192 CHUNKS=2 num_warps=8 RELOAD=1 min_programs_per_sm=2"
  "BLOCK=8192 CHUNKS=2 num_warps=8 RELOAD=1 min_programs_per_sm=3"
  "BLOCK=16384 RELOAD=1")
mid=("" "BLOCK=8192 HELD=1" "BLOCK=4096 CHUNKS=2 HELD=2 num_warps=4" "BLOCK=4096 CHUNKS=2 HELD=2 num_warps=8")
for round in 1 2; do
  echo "#### round $round"
  for s in 512x262144 256x262144; do
    for k in rmsnorm layernorm; do for c in "${wide[@]}"; do run $k $s $c; done; done
    for c in "" "BLOCK=8192 CHUNKS=2 num_warps=8 RELOAD=1 min_programs_per_sm=2" "BLOCK=8192 CHUNKS=2 num_warps=8 RELOAD=1 min_programs_per_sm=3" "BLOCK=8192 CHUNKS=2 num_warps=16 RELOAD=1"; do run add_rmsnorm $s $c; done
  done
  for s in 2048x65536 8192x16384 1024x131072; do for c in "${mid[@]}"; do run layernorm $s $c; done; done
done
