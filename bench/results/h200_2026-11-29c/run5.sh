#!/usr/bin/env bash
# Run 5 (final code): softmax backward in batches, LayerNorm's rows program in two passes
# (old/ = run 4's build, shifted sums; new/ = final), and LayerNorm's odd 16-bit rows of
# 600-1000 B batched by hand; the GPU tests of the change, memcheck.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local v=$1; shift; (cd $v && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j | sed "s/^/$v /"); }
for t in test_gpu_row_batches test_gpu_softmax_backward test_autotune_gpu test_gpu_cross_entropy; do
  s=$(date +%s); LD_LIBRARY_PATH=$PWD/new timeout 200 new/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || tail -40 /tmp/$t.log
done
echo "== memcheck"
LD_LIBRARY_PATH=$PWD/new compute-sanitizer --tool memcheck new/test_gpu_row_batches 2>&1 | tail -2
S=262144x128,131072x256,65536x512,131072x250
for round in 1 2; do
  echo "== round $round"
  b old layernorm,softmax_bwd --dtype bf16 --shape $S
  b new layernorm,softmax_bwd --dtype bf16 --shape $S
done
b new softmax_bwd --dtype f32,f16 --shape $S
b old softmax_bwd --dtype f32,f16 --shape $S
echo "== LayerNorm odd 16-bit rows of 600-1000 B: one row per program / batched"
for r in 1 2; do
  b new layernorm --dtype bf16 --shape 65536x300,65536x500,65536x400
  b new layernorm --dtype bf16 --shape 65536x300,65536x500,65536x400 --set ROWS=2
done
