#!/usr/bin/env bash
# LOOPED cluster softmax: GPU test + memcheck of it, then the split schedule (heuristic) against
# LOOPED configs on rows too long for a cluster's registers, same command
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
timeout 120 ./test_gpu_split_rows 2>&1 | grep -E "test cases|assertions|ERROR|FAIL" | head -20
timeout 100 compute-sanitizer --tool memcheck ./test_gpu_split_rows -tc='*looped*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,32x1048577,32x1048578,8x4194304,128x262145,128x262146,16x262144,64x524288
for round in 1 2; do
  timeout 60 ./tilefuse-bench softmax --dtype bf16 --shape $S --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round heur"
  timeout 60 ./tilefuse-bench softmax --dtype bf16 --shape $S --reps 10 --json --set SPLIT=0 --set LOOPED=1 --set cluster=16 --set BLOCK=4096 --set num_warps=4 > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round c16b4k"
  timeout 60 ./tilefuse-bench softmax --dtype bf16 --shape $S --reps 10 --json --set SPLIT=0 --set LOOPED=1 --set cluster=16 --set BLOCK=8192 --set num_warps=8 > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round c16b8k"
  if [ $round = 1 ]; then
  timeout 60 ./tilefuse-bench softmax --dtype bf16 --shape $S --reps 10 --json --set SPLIT=0 --set LOOPED=1 --set cluster=8 --set BLOCK=8192 --set num_warps=8 > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round c8b8k"
  timeout 60 ./tilefuse-bench softmax --dtype f32 --shape 32x1048576,128x262145 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round heur"
  timeout 60 ./tilefuse-bench softmax --dtype f32 --shape 32x1048576,128x262145 --reps 10 --json --set SPLIT=0 --set LOOPED=1 --set cluster=16 --set BLOCK=4096 --set num_warps=8 > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "r$round c16b4k8w"
  fi
done
