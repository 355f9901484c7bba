#!/usr/bin/env bash
# A/B: rows of 256K+ columns on clusters (new) against the split schedule (old: the previous
# bundle's tilefuse-bench and library in old/), same command, two rounds
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=128x262144,64x262144,32x262144,16x262144,128x262145,128x262146,128x262148,100x300000,100x327680,512x262151
F=128x262144,128x262145,100x300000
K=softmax,rmsnorm,add_rmsnorm,layernorm
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'])
" "$1" "$2"; }
for round in 1 2; do
  for v in old new; do
    if [ $v = old ]; then bin="env LD_LIBRARY_PATH=$PWD/old ./old/tilefuse-bench"; else bin=./tilefuse-bench; fi
    timeout 100 $bin $K --dtype bf16 --shape $B --reps 10 --json > /tmp/$v.json 2>/tmp/$v.err || tail -3 /tmp/$v.err
    show /tmp/$v.json "r$round $v"
    if [ $round = 1 ]; then timeout 60 $bin $K --dtype f32 --shape $F --reps 10 --json > /tmp/$v.json 2>/tmp/$v.err || tail -3 /tmp/$v.err; show /tmp/$v.json "r$round $v"; fi
  done
done
