#!/usr/bin/env bash
# The shipped read hints against the previous commit (old/: its library and bench), two
# rounds in alternating order, bf16 / f16 / f32; then the GPU test suite.
cd "$(dirname "$0")"
S=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000,8191x4097,2048x16385
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 \7/'; }
run() {  # $1: directory of the bench and library
  ( cd $1; export LD_LIBRARY_PATH=$PWD
    ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm,softmax_bwd,swiglu,swiglu_bwd --dtype bf16 --shape $S --reps 10 --json | j
    ./tilefuse-bench cross_entropy --dtype bf16 --shape 8192x32000,4096x128256,2048x151936,16384x50304,4096x128257 --reps 10 --json | j
    ./tilefuse-bench softmax,rmsnorm,layernorm,softmax_bwd,swiglu --dtype f16,f32 --shape 16384x4096,2048x65536,8191x4097 --reps 10 --json | j )
}
for round in 1 2; do
  if [ $round = 1 ]; then order="old new"; else order="new old"; fi
  for v in $order; do
    echo "== round $round $v"
    if [ $v = old ]; then run old; else run .; fi
  done
done
