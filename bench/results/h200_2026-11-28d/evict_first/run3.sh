#!/usr/bin/env bash
# Loads with and without the L1::evict_first hint (TILEFUSE_EXP=noef drops it in the
# compiler), every row and training kernel, two rounds in alternating order.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
S=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000,8191x4097
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \4 \5 \6/'; }
run() {
  $B softmax,rmsnorm,add_rmsnorm,layernorm,softmax_bwd,rmsnorm_bwd,layernorm_bwd,swiglu_bwd --shape $S --reps 10 --json | j
  $B cross_entropy --shape 8192x32000,4096x128256,2048x151936,16384x50304 --reps 10 --json | j
}
for round in 1 2; do
  if [ $round = 1 ]; then order="base noef"; else order="noef base"; fi
  for v in $order; do
    echo "== round $round $v"
    if [ $v = noef ]; then TILEFUSE_EXP=noef run; else run; fi
  done
done
