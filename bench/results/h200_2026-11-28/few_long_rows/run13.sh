#!/usr/bin/env bash
# final code: GPU tests of the row schedules, then A/B of few long rows (old: split below 132 rows)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_split_rows test_gpu_row_chunks; do timeout 90 ./$t 2>&1 | grep -E "test cases|assertions|FAIL|ERROR" | sed "s/^/$t: /"; done
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
K=softmax,rmsnorm,add_rmsnorm,layernorm
for v in old new; do
  if [ $v = old ]; then bin="env LD_LIBRARY_PATH=$PWD/old ./old/tilefuse-bench"; else bin=./tilefuse-bench; fi
  timeout 80 $bin $K --dtype bf16 --shape 256x262144,40x262144,32x262144,100x131072 --reps 10 --json > /tmp/$v.json 2>/tmp/$v.err || tail -3 /tmp/$v.err
  show /tmp/$v.json "$v"
  timeout 60 $bin $K --dtype f32 --shape 128x262144,64x262144 --reps 10 --json > /tmp/$v.json 2>/tmp/$v.err || tail -3 /tmp/$v.err
  show /tmp/$v.json "$v"
done
