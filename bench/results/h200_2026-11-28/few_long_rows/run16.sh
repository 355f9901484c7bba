#!/usr/bin/env bash
# split-row softmax from the rows' aligned starts (new) against element-wise odd rows (old bundle), same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
timeout 120 ./test_gpu_split_rows 2>&1 | grep -E "test cases|assertions|ERROR|FAIL" | head -20
timeout 100 compute-sanitizer --tool memcheck ./test_gpu_split_rows -tc='*split-row softmax*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,32x1048577,32x1048578,32x1048580,128x262145,128x262146,8x4194305,16x262145,1024x65537
for round in 1 2; do
  for v in old new; do
    if [ $v = old ]; then bin="env LD_LIBRARY_PATH=$PWD/old ./old/tilefuse-bench"; else bin=./tilefuse-bench; fi
    timeout 80 $bin softmax --dtype bf16 --shape $S --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round $v"
    if [ $round = 1 ]; then timeout 60 $bin softmax --dtype f32 --shape 32x1048577,32x1048578,128x262145 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round $v"; fi
  done
done
