#!/usr/bin/env bash
# Memory clusters: GPU tests, then rows past 16 x 16384 columns on clusters of 32-256
# programs (default) against the split schedule (TILEFUSE_MEMORY_CLUSTERS=0), same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_memory_clusters test_gpu_cluster_combine test_gpu_cluster_loops test_gpu_split_rows test_gpu_row_chunks; do
  echo "== $t"; timeout 150 ./$t 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error" | head -12
done
timeout 120 compute-sanitizer --tool memcheck ./test_gpu_memory_clusters -tc='*launch after launch*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,8x4194304,16x1048576,64x1048576,32x1048577,128x262145,16x524288,4x4194304
for round in 1 2; do
  for v in split mem; do
    if [ $v = split ]; then e=0; else e=1; fi
    TILEFUSE_MEMORY_CLUSTERS=$e timeout 150 ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm --dtype bf16 --shape $S --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -3 /tmp/a.err; show /tmp/a.json "r$round $v"
    if [ $round = 1 ]; then TILEFUSE_MEMORY_CLUSTERS=$e timeout 100 ./tilefuse-bench softmax,rmsnorm --dtype f32 --shape 32x1048576,8x4194304,16x1048577 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -3 /tmp/a.err; show /tmp/a.json "r$round $v"; fi
  done
done
