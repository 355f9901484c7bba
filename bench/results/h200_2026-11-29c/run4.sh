#!/usr/bin/env bash
# Run 4 (final code): the GPU tests whose code paths the change touches besides run 3's
# (tuner, aligned rows, split rows, DLPack, driver), and the rows tests again;
# cross-entropy's rows per program (2 / 4 / 8 KB per program); the training kernels at
# short rows (not batched: status); LayerNorm at 16-bit rows of 250 / 500 columns.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
for t in test_gpu_row_batches test_autotune_gpu test_gpu_aligned_rows test_gpu_split_rows test_dlpack_gpu test_cuda_gpu; do
  s=$(date +%s); LD_LIBRARY_PATH=$PWD/new timeout 200 new/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || tail -40 /tmp/$t.log
done
echo "== cross-entropy rows per program"
for r in "ROWS=4 num_warps=1" "ROWS=8 num_warps=1" "ROWS=8 num_warps=2" "ROWS=16 num_warps=2" "ROWS=16 num_warps=4" "ROWS=32 num_warps=4"; do
  echo "-- $r"
  b cross_entropy --dtype bf16 --shape 262144x128 $(for kv in $r; do echo --set $kv; done)
done
for r in "ROWS=2 num_warps=1" "ROWS=4 num_warps=1" "ROWS=4 num_warps=2" "ROWS=8 num_warps=2" "ROWS=8 num_warps=4"; do
  echo "-- $r"
  b cross_entropy --dtype bf16 --shape 131072x256 --set BLOCK=256 $(for kv in $r; do echo --set $kv; done)
  b cross_entropy --dtype bf16 --shape 65536x512 --set BLOCK=512 $(for kv in $r; do echo --set $kv; done)
done
echo "== heuristic now"
b layernorm --dtype bf16 --shape 65536x500,131072x250,65536x300
b softmax_bwd,rmsnorm_bwd,layernorm_bwd,swiglu --dtype bf16 --shape 262144x128,131072x256,65536x512
