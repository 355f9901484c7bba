#!/usr/bin/env bash
# Run 7: bf16 LayerNorm on clusters (82.9% at 2048x65536, 87.3% at 8192x16384 in run 2,
# where f32 on the same chunks reaches 93-95%): the heuristic (chunks of 4096 held, one warp
# per 2048 columns) against twice the columns per program on half the cluster, and twice
# the warps, by --set; two rounds.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c7 && export TILEFUSE_CACHE_DIR=/tmp/c7
run() { local s=$1; shift; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-58s ' "$*"; timeout 60 ./tilefuse-bench layernorm --dtype bf16 --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{print $3, $4, $5, $6}'; }
for round in 1 2; do
  echo "#### round $round"
  for s in 8192x16384 4096x32768 2048x65536; do
    c=$((16384 * 2 / ${s#*x} )); [ $c -lt 1 ] && c=1
    run $s
    run $s BLOCK=4096 CHUNKS=2 HELD=2 num_warps=8
    run $s BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 cluster=$(( ${s#*x} / 16384 ))
    run $s BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 cluster=$(( ${s#*x} / 16384 )) min_programs_per_sm=3
    run $s BLOCK=8192 CHUNKS=2 HELD=2 num_warps=8 cluster=$(( ${s#*x} / 16384 ))
  done
  run 512x262144
  run 512x262144 BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 min_programs_per_sm=0
  run 512x262144 BLOCK=4096 CHUNKS=4 HELD=4 num_warps=16
done
