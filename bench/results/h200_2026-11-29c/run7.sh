#!/usr/bin/env bash
# Run 7 (final code): SwiGLU forward and backward in batches at N = 128-512 (old/ = run 6's
# build, one row per program); the SwiGLU and rows GPU tests.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local v=$1; shift; (cd $v && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j | sed "s/^/$v /"); }
for t in test_gpu_swiglu test_gpu_row_batches; do
  LD_LIBRARY_PATH=$PWD/new new/$t > /tmp/$t.log 2>&1; echo "$t rc=$?: $(grep 'test cases:' /tmp/$t.log | tail -1)"
done
S=262144x128,131072x256,131072x250,65536x512
for round in 1 2; do
  b old swiglu,swiglu_bwd --dtype bf16 --shape $S
  b new swiglu,swiglu_bwd --dtype bf16 --shape $S
done
b new swiglu,swiglu_bwd --dtype f32 --shape $S
b old swiglu,swiglu_bwd --dtype f32 --shape $S
