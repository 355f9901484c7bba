#!/usr/bin/env bash
# Warp-uniform finishing of checked runs: TILEFUSE_UNIFORM_RUNS=0 against the default,
# two rounds in alternating order.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
S=8191x4097,16384x4099,8192x8197,4096x16383,2048x65537,4096x30011,2048x16385,16384x5000,16384x4096
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 \7/'; }
run() {  # $1: TILEFUSE_UNIFORM_RUNS
  echo "== UNIFORM_RUNS=$1"
  export TILEFUSE_UNIFORM_RUNS=$1
  ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm,softmax_bwd,cross_entropy,swiglu --dtype bf16 --shape $S --reps 10 --json | j
  ./tilefuse-bench softmax,rmsnorm,layernorm,softmax_bwd --dtype f16,f32 --shape 8191x4097,2048x65537,4096x30011 --reps 10 --json | j
}
run 0; run 1; run 1; run 0
