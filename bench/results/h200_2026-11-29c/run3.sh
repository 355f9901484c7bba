#!/usr/bin/env bash
# Run 3: short rows in batches (ROWS rows per program) for softmax, cross-entropy and
# the norms, previous commit (old/) -> this one (new/), alternating; LayerNorm's held
# chunks by the heuristic; the GPU tests of the change, memcheck of the rows programs.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local v=$1; shift; (cd $v && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j | sed "s/^/$v /"); }
for t in test_gpu_row_batches test_gpu_cross_entropy test_gpu_gallery test_gpu_held_loads test_gpu_row_chunks; do
  s=$(date +%s); LD_LIBRARY_PATH=$PWD/new new/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || tail -40 /tmp/$t.log
done
echo "== memcheck rows programs"
LD_LIBRARY_PATH=$PWD/new compute-sanitizer --tool memcheck new/test_gpu_row_batches 2>&1 | tail -3
LD_LIBRARY_PATH=$PWD/new compute-sanitizer --tool memcheck new/test_gpu_cross_entropy -tc='*batches*' 2>&1 | tail -3
K=softmax,cross_entropy,rmsnorm,add_rmsnorm,layernorm
S=262144x128,131072x256,65536x512,262144x512,131072x250,65536x500,32768x1000
for round in 1 2; do
  echo "== round $round bf16"
  b old $K --dtype bf16 --shape $S
  b new $K --dtype bf16 --shape $S
done
echo "== f32, f16"
b new $K --dtype f32,f16 --shape $S
b old $K --dtype f32,f16 --shape $S
echo "== LayerNorm held by the heuristic"
b old layernorm --dtype bf16,f16 --shape 2048x65536,512x262144,4096x32768,8192x16384
b new layernorm --dtype bf16,f16 --shape 2048x65536,512x262144,4096x32768,8192x16384
