#!/usr/bin/env bash
# Run 5: (a) broadcast loads in the rows' layout (layout pass): the same new
# tilefuse-bench on the previous library (old/) and the new one (new/), alternated per
# shape, two rounds, at short rows of odd width; (b) the GPU tests that run the changed
# heuristics and rows programs, on the new library and test binaries.
r=${1:?dir with old/ and new/}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
run() { local v=$1; shift; timeout 60 $r/$v/tilefuse-bench "$@" --reps 10 --json 2>&1 | j | sed "s/^/$v /"; }
for round in 1 2; do
  for dt in bf16 f32; do
    for s in 131072x250 65536x300 65536x500 262144x100 262144x128; do
      run old layernorm,rmsnorm,add_rmsnorm --dtype $dt --shape $s
      run new layernorm,rmsnorm,add_rmsnorm --dtype $dt --shape $s
    done
  done
done
export LD_LIBRARY_PATH=$r/new
for tl in test_gpu_row_batches:60 test_gpu_row_chunks:60 test_gpu_aligned_rows:60 test_gpu_split_rows:60 test_nvptx_gpu:130 test_gpu_gallery:150; do
  t=${tl%:*}; s=$(date +%s); timeout ${tl#*:} $r/new/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - s ))s: $(grep 'test cases:' /tmp/$t.log | tail -1)"
  [ $rc = 0 ] || [ $rc = 124 ] || tail -30 /tmp/$t.log
done
