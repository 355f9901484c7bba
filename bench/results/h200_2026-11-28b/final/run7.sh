#!/usr/bin/env bash
# The whole GPU suite on the final commit's bundle (the gallery last, in the time left),
# then the split schedule in batches of rows (BATCH_ROWS, now with programmatic dependent
# launch) against one batch, if time remains.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
for t in test_*; do
  [ "$t" = test_gpu_gallery ] && continue
  timeout 100 ./$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(grep -h 'test cases:' /tmp/$t.log | tail -1 | sed 's/^\[doctest\] *//')"
  grep -hE "ERROR|FAIL|error" /tmp/$t.log | head -5
done
echo "elapsed $(( $(date +%s) - start )) s"
left=$(( 470 - ($(date +%s) - start) ))
timeout $left ./test_gpu_gallery > /tmp/g.log 2>&1; rc=$?
echo "test_gpu_gallery rc=$rc (limit ${left}s) $(grep -h 'test cases:' /tmp/g.log | tail -1 | sed 's/^\[doctest\] *//')"
grep -hE "ERROR|FAIL" /tmp/g.log | head -5
echo "elapsed $(( $(date +%s) - start )) s"
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
for v in 0 8; do
  [ $(( $(date +%s) - start )) -gt 520 ] && break
  timeout 30 ./tilefuse-bench softmax,add_rmsnorm --dtype bf16 --shape 32x1048576,64x1048577 --reps 10 --json --set BATCH_ROWS=$v > /tmp/a.json 2>/dev/null && show /tmp/a.json "batch=$v"
done
