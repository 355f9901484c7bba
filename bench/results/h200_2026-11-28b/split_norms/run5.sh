#!/usr/bin/env bash
# Split norms from the rows' aligned starts (default now) against element-wise rows
# (--set ALIGN_ROWS=0, the previous behaviour), alternated in one command; GPU tests.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
echo "== test_gpu_split_rows"; timeout 150 stdbuf -oL ./test_gpu_split_rows 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error|logged|:=" | head -12
timeout 150 compute-sanitizer --tool memcheck ./test_gpu_split_rows -tc='*rmsnorm*,*layernorm*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048577,128x262145,8x4194305,32x1048578,16x262145,64x1048579,32x1048580
for round in 1 2; do
  for v in elem aligned; do
    if [ $v = elem ]; then set_=(--set ALIGN_ROWS=0); else set_=(); fi
    timeout 120 ./tilefuse-bench rmsnorm,add_rmsnorm,layernorm --dtype bf16 --shape $S --reps 10 --json "${set_[@]}" > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round $v"
    if [ $round = 1 ]; then timeout 60 ./tilefuse-bench rmsnorm,add_rmsnorm,layernorm --dtype f32 --shape 32x1048577,128x262145,32x1048578 --reps 10 --json "${set_[@]}" > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round $v"; fi
  done
done
