#!/usr/bin/env bash
# Run 3: LayerNorm's weight and bias copied into shared memory at the program's start
# (HOLD_PARAMS=1), next to x, against reading them after the exchange; on the heuristic's
# programs and on others (BLOCK, CHUNKS all held, warps, cluster, min_programs_per_sm), two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c3 && export TILEFUSE_CACHE_DIR=/tmp/c3
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-12s %-92s ' $k $d $s "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=$3=""; print}' | cut -c1-200; }
cfg() { echo "SPLIT=0 BLOCK=$1 CHUNKS=$2 HELD=$2 RELOAD=0 num_warps=$3 cluster=$4 min_programs_per_sm=$5"; }
both() { local d=$1 s=$2; shift 2; run layernorm $d $s "$@" HOLD_PARAMS=0; run layernorm $d $s "$@" HOLD_PARAMS=1; }
sweep() { local d=$1 s=$2; shift 2; both $d $s; for c in "$@"; do both $d $s $(cfg $c); done; }
for round in 1 2; do
  echo "#### round $round"
  sweep bf16 2048x65536 "8192 1 8 8 0" "4096 2 4 8 0" "4096 2 8 8 0" "8192 2 8 4 0" "4096 4 8 4 0"
  sweep f16 2048x65536 "8192 1 8 8 0"
  sweep bf16 4096x32768 "8192 1 8 4 0" "8192 2 8 2 0"
  sweep bf16 8192x16384 "8192 1 8 2 0" "8192 2 16 1 0"
  sweep bf16 1024x131072 "8192 1 8 16 0" "8192 2 8 8 0"
  sweep bf16 512x262144 "8192 2 8 16 0"
  both bf16 512x262144 SPLIT=0 BLOCK=8192 CHUNKS=2 HELD=0 RELOAD=1 num_warps=8 cluster=16 min_programs_per_sm=0
  both bf16 16384x4096; both bf16 16384x4096 num_warps=8; both bf16 65536x1024; both bf16 16384x5000
done
