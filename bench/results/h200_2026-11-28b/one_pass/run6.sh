#!/usr/bin/env bash
# One-pass split softmax (ONE_PASS=1, LAG from the host or set) against the two-kernel
# split schedule, same command; GPU tests first.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
echo "== test_gpu_split_rows"; timeout 150 stdbuf -oL ./test_gpu_split_rows 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error|logged|:=" | head -12; echo "rc=${PIPESTATUS[0]}"
timeout 120 compute-sanitizer --tool memcheck ./test_gpu_split_rows -tc='*one-pass*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,64x1048576,8x4194304,32x1048577,128x262145,16x262144,32x262144
b() { local tag=$1; shift; timeout 100 ./tilefuse-bench softmax --dtype bf16 --shape $S --reps 10 --json "$@" > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "$tag"; }
for round in 1 2; do
  b "r$round two"
  b "r$round one" --set ONE_PASS=1
  if [ $round = 1 ]; then
    b "r$round one-lag2" --set ONE_PASS=1 --set LAG=2
    b "r$round one-lag8" --set ONE_PASS=1 --set LAG=8
    b "r$round one-b8192" --set ONE_PASS=1 --set BLOCK=8192 --set num_warps=8
    timeout 60 ./tilefuse-bench softmax --dtype f32 --shape 32x1048576,16x1048577 --reps 10 --json > /tmp/a.json 2>/dev/null; show /tmp/a.json "r1 two"
    timeout 60 ./tilefuse-bench softmax --dtype f32 --shape 32x1048576,16x1048577 --reps 10 --json --set ONE_PASS=1 > /tmp/a.json 2>/dev/null; show /tmp/a.json "r1 one"
  fi
done
