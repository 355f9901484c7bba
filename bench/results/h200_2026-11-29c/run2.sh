#!/usr/bin/env bash
# Run 2: how many rows a program should take for short rows (softmax's rows program,
# ROWS x BLOCK tiles, at widths 128-1024, bf16 and f32); LayerNorm HELD at more cluster
# shapes (fewer rows, odd widths) before it goes into the heuristic.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
S=262144x128,131072x256,65536x512,32768x1024,262144x512
for d in bf16 f32; do
  echo "== softmax $d default"
  b softmax --dtype $d --shape $S
  for r in "ROWS=1 num_warps=1" "ROWS=2 num_warps=1" "ROWS=4 num_warps=1" "ROWS=8 num_warps=1" "ROWS=4 num_warps=2" "ROWS=8 num_warps=2" "ROWS=8 num_warps=4" "ROWS=16 num_warps=4"; do
    echo "-- softmax $d $r"
    b softmax --dtype $d --shape $S $(for kv in $r; do echo --set $kv; done)
  done
done
echo "== LayerNorm HELD A/B"
for h in 0 16 0 16; do
  echo "-- HELD=$h"
  b layernorm --dtype bf16 --shape 128x262144,64x262144,4096x32768,2048x16385,512x65537,256x131072 --set HELD=$h
done
