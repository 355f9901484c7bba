#!/usr/bin/env bash
# Run 5: the whole GPU suite on the 64 KB programs' build; then, two rounds, LayerNorm's
# 64 KB programs (heuristic) against the previous configs, and softmax and LayerNorm on
# few rows around the new threshold.
b=${1:?bundle}; out=${2:?out}
echo "#### suite"
(cd $b && TILEFUSE_CACHE_DIR=$(mktemp -d) TEST_JOBS=4 timeout 300 ./run-gpu-tests.sh 2>&1 | tail -26)
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c5 && export TILEFUSE_CACHE_DIR=/tmp/c5
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-58s ' $k $d "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=""; print}' | cut -c1-200; }
P16="SPLIT=0 BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 cluster=16 min_programs_per_sm=3"
P8="SPLIT=0 BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 cluster=8 min_programs_per_sm=3"
for round in 1 2; do
  echo "#### round $round: LayerNorm heuristic / previous"
  for d in bf16 f16; do
    run layernorm $d 512x262144; run layernorm $d 512x262144 $P16
    run layernorm $d 128x262144; run layernorm $d 128x262144 $P16
    run layernorm $d 2048x131072; run layernorm $d 2048x131072 $P8
    run layernorm $d 256x131072; run layernorm $d 256x131072 $P8
  done
  echo "#### round $round: few rows (heuristic)"
  for s in 32x262144 33x262144 48x262144 65x131072 100x131072; do run softmax bf16 $s; run layernorm bf16 $s; done
  run layernorm bf16 100x131072 SPLIT=1 BLOCK=4096 num_warps=4
done
