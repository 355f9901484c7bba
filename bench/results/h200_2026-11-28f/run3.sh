#!/usr/bin/env bash
# (a) row programs per SM: the heuristic (softmax asked about the width; cross-entropy's
# one-program rows now capped too) vs none (min_programs_per_sm=0), alternating order;
# (b) the GPU suite with approximate math flushing subnormals (now the default).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
start=$SECONDS
H=8191x4097,16384x4099,16383x1025,8191x3001,4095x8193,2047x16385,16384x4096
heur() { echo "== heuristic $1"; ./tilefuse-bench softmax,cross_entropy --dtype bf16 --shape $H --reps 10 --json $2 | j; }
heur default ""; heur uncapped "--set min_programs_per_sm=0"; heur uncapped "--set min_programs_per_sm=0"; heur default ""
echo "heuristic: $((SECONDS-start)) s"
t=$SECONDS
timeout 480 ./run-gpu-tests.sh
echo "suite took $((SECONDS-t)) s"
