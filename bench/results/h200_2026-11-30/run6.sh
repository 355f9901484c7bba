#!/usr/bin/env bash
# Run 6: the norm backward at widths that fill a power-of-two tile partly (bf16 16384x5000,
# LayerNorm from saved statistics at 74% in run 2): the one-tile program (heuristic, 8192
# tile, 39% masked) against the cluster programs with a cluster of one covering the row
# with chunks and a tail (fewer masked lanes), by --set; two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c6 && export TILEFUSE_CACHE_DIR=/tmp/c6
run() { local k=$1 s=$2; shift 2; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-14s %-62s ' "$k" "$*"; timeout 60 ./tilefuse-bench $k --dtype bf16 --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{print $3, $4, $5, $6}'; }
cfgs=(""
  "BLOCK=4096 TAIL=1024 num_warps=16 PROGRAMS_PER_SM=1 num_stages=2"
  "BLOCK=4096 TAIL=1024 num_warps=8 PROGRAMS_PER_SM=2 num_stages=2"
  "BLOCK=2048 CHUNKS=2 TAIL=1024 num_warps=16 PROGRAMS_PER_SM=1 num_stages=2"
  "BLOCK=2048 CHUNKS=2 TAIL=1024 num_warps=8 PROGRAMS_PER_SM=2 num_stages=2"
  "BLOCK=1024 CHUNKS=5 TAIL=8 num_warps=8 PROGRAMS_PER_SM=2 num_stages=2"
  "BLOCK=1024 CHUNKS=5 TAIL=8 num_warps=16 PROGRAMS_PER_SM=1 num_stages=2")
c3=("" "BLOCK=2048 TAIL=1024 num_warps=8 PROGRAMS_PER_SM=2 num_stages=2" "BLOCK=2048 TAIL=1024 num_warps=16 PROGRAMS_PER_SM=1 num_stages=2" "BLOCK=1024 CHUNKS=3 TAIL=8 num_warps=8 PROGRAMS_PER_SM=2 num_stages=2")
for round in 1 2; do
  echo "#### round $round"
  for k in layernorm_bwd rmsnorm_bwd; do
    for c in "${cfgs[@]}"; do run $k 16384x5000 $c; done
    for c in "${c3[@]}"; do run $k 16384x3000 $c; done
  done
done
