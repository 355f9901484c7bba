#!/usr/bin/env bash
# Run 2: LayerNorm's wide 16-bit rows on other programs, two rounds. Run 1 had RMSNorm at
# 94.2% of copy at 2048x65536 on 8 programs of one held 8192-column tile, 8 warps and no
# register cap (32 registers, 8 programs per SM), where LayerNorm's heuristic (4 held chunks
# of 4096 on a cluster of 4, capped at 3 per SM) ran 84.4%. Each config: BLOCK, CHUNKS (all
# held), warps, cluster, min_programs_per_sm.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c2 && export TILEFUSE_CACHE_DIR=/tmp/c2
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-12s %-78s ' $k $d $s "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=$3=""; print}' | cut -c1-200; }
cfg() { echo "SPLIT=0 BLOCK=$1 CHUNKS=$2 HELD=$2 RELOAD=0 num_warps=$3 cluster=$4 min_programs_per_sm=$5"; }
sweep() { local d=$1 s=$2; shift 2; run layernorm $d $s; for c in "$@"; do run layernorm $d $s $(cfg $c); done; }
for round in 1 2; do
  echo "#### round $round"
  sweep bf16 2048x65536 "8192 1 8 8 0" "8192 1 8 8 5" "8192 1 16 8 0" "4096 2 8 8 0" "4096 2 4 8 0" "8192 2 8 4 0" "8192 2 8 4 3" "4096 4 8 4 0"
  sweep f16 2048x65536 "8192 1 8 8 0" "8192 2 8 4 0"
  sweep bf16 512x262144 "8192 2 8 16 0" "8192 2 8 16 3" "8192 2 16 16 0" "4096 4 8 16 0" "8192 4 8 8 0" "8192 4 16 8 0" "4096 8 8 8 3"
  sweep f16 512x262144 "8192 2 8 16 0" "8192 4 16 8 0"
  sweep bf16 8192x16384 "8192 1 8 2 0" "8192 2 8 1 0" "8192 2 16 1 0" "4096 2 8 2 0"
  sweep bf16 4096x32768 "8192 1 8 4 0" "8192 2 8 2 0" "4096 4 8 2 0"
  sweep bf16 1024x131072 "8192 1 8 16 0" "8192 2 8 8 0" "8192 2 16 8 0"
  run layernorm bf16 16384x4096; run layernorm bf16 16384x4096 num_warps=8; run layernorm bf16 16384x4096 num_warps=2
  run rmsnorm bf16 512x262144; run rmsnorm bf16 512x262144 $(cfg "8192 2 8 16 0"); run rmsnorm bf16 512x262144 $(cfg "8192 2 16 16 0")
done
