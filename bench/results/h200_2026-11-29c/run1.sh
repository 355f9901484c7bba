#!/usr/bin/env bash
# Run 1: the GPU tests that changed since the last whole-suite run (held loads with the
# review's cases, LayerNorm HELD, the row fuzzer's held seeds), memcheck of the held
# loads; LayerNorm HELD A/B at its cluster shapes; short 16-bit rows (status, ROWS).
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
export LD_LIBRARY_PATH=$PWD/new
for t in test_gpu_held_loads test_gpu_row_chunks test_gpu_cross_entropy test_nvptx_gpu; do
  s=$(date +%s); new/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || tail -40 /tmp/$t.log
done
echo "== memcheck held loads"
compute-sanitizer --tool memcheck new/test_gpu_held_loads 2>&1 | tail -4
echo "== LayerNorm HELD A/B"
for h in 0 16 0 16; do
  echo "-- HELD=$h"
  b layernorm --dtype bf16,f16 --shape 2048x65536,1024x131072,512x262144,8192x16384 --set HELD=$h
done
echo "== short rows"
b softmax,cross_entropy,rmsnorm,layernorm --dtype bf16 --shape 262144x512,65536x1024,32768x1000,131072x768
for r in "ROWS=2 num_warps=1" "ROWS=2 num_warps=2" "ROWS=4 num_warps=2" "ROWS=4 num_warps=4"; do
  echo "-- softmax $r"
  b softmax --dtype bf16 --shape 262144x512,65536x1024,32768x1000 $(for kv in $r; do echo --set $kv; done)
done
echo "== resources of short CE rows"
(cd new && TILEFUSE_PRINT_RESOURCES=1 ./tilefuse-bench cross_entropy --dtype bf16 --shape 262144x512,32768x1000 --reps 3 2>&1 | grep -i "regist\|program" | head -8)
