#!/usr/bin/env bash
# Blocks zeroed whole at exit: the cluster GPU tests and memcheck, then memory clusters
# (TILEFUSE_MEMORY_CLUSTERS=1) against the split schedule at more shapes, same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for t in test_gpu_memory_clusters test_gpu_cluster_combine test_gpu_cluster_loops test_gpu_split_rows test_gpu_row_chunks; do
  echo "== $t"; timeout 120 stdbuf -oL ./$t 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error|logged|:=" | head -12; echo "rc=${PIPESTATUS[0]}"
done
timeout 150 compute-sanitizer --tool memcheck ./test_gpu_memory_clusters -tc='*persistent loops*' 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
for v in split mem; do
  if [ $v = split ]; then e=0; else e=1; fi
  TILEFUSE_MEMORY_CLUSTERS=$e timeout 120 ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm --dtype bf16 --shape 64x1048576,128x1048576,32x2097152,16x2097152 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "$v"
  TILEFUSE_MEMORY_CLUSTERS=$e timeout 60 ./tilefuse-bench add_rmsnorm,layernorm --dtype f32 --shape 64x1048576,32x1048576 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "$v"
done
