#!/usr/bin/env bash
# Run 6 (final code): softmax backward in batches through the bench's heuristic (old/ =
# run 5's bench, unbatched), LayerNorm's odd 16-bit rows of 600-1000 B now batched by the
# heuristic, the rows GPU test again.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local v=$1; shift; (cd $v && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j | sed "s/^/$v /"); }
LD_LIBRARY_PATH=$PWD/new new/test_gpu_row_batches 2>&1 | tail -2
S=262144x128,131072x256,131072x250,65536x512
for round in 1 2; do
  b old softmax_bwd --dtype bf16,f32 --shape $S
  b new softmax_bwd --dtype bf16,f32 --shape $S
done
b new layernorm --dtype bf16,f16 --shape 65536x300,65536x500,131072x250
