#!/usr/bin/env bash
# Checked runs' finishing: per run (UNIFORM_RUNS=0) or after a warp vote (1), the merge's
# kept edge split (split) or not (nosplit, the previous lowering); alternating order.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
S=8191x4097,16384x4099,8192x8197,4096x30011,2048x65537,16384x4096
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6/'; }
run() { echo "== $1 $2"; TILEFUSE_UNIFORM_RUNS=$1 TILEFUSE_EXP=$2 ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm,softmax_bwd,cross_entropy --dtype bf16 --shape $S --reps 10 --json | j; }
start=$SECONDS
run 0 nosplit; run 0 split; run 1 split; run 1 nosplit
echo "round 1: $((SECONDS-start)) s"
if [ $((SECONDS-start)) -lt 200 ]; then run 1 nosplit; run 1 split; run 0 split; run 0 nosplit; fi
echo "total: $((SECONDS-start)) s"
