#!/usr/bin/env bash
# residual RMSNorm: heuristic (ALIGN_ROWS where it pays) against ALIGN_ROWS=0, final code, twice
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for r in 1 2; do
for a in heur 0; do
  set_=(); [ $a = 0 ] && set_=(--set ALIGN_ROWS=0)
  timeout 100 ./tilefuse-bench add_rmsnorm,softmax_bwd,cross_entropy "${set_[@]}" --shape 2048x65537,8192x8197,4096x16383,4096x30011,8192x20001 2>&1 | grep -E "^(add|soft|cross)" | cut -c1-100 | sed "s/^/$a /"
done; done
