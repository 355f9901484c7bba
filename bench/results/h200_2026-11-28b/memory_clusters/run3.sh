#!/usr/bin/env bash
# After the warp-uniform wait: the memory-cluster GPU tests, then memory clusters as
# persistent clusters looping over rows (PERSISTENT=1, PROGRAMS_PER_SM, num_stages)
# against one row per cluster and the split schedule, same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
echo "== test_gpu_memory_clusters"; timeout 100 stdbuf -oL ./test_gpu_memory_clusters 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error|logged|:=" | head -16; echo "rc=${PIPESTATUS[0]}"
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,64x1048576,16x1048576,128x262145
K=softmax,rmsnorm,add_rmsnorm
b() { local tag=$1; local k=$2; shift 2; timeout 100 ./tilefuse-bench $k --dtype bf16 --shape $S --reps 10 --json "$@" > /tmp/a.json 2>/tmp/a.err || tail -2 /tmp/a.err; show /tmp/a.json "$tag"; }
for round in 1 2; do
  TILEFUSE_MEMORY_CLUSTERS=0 b "r$round split" $K
  b "r$round mem" $K
  b "r$round mem-p3" softmax --set PERSISTENT=1 --set PROGRAMS_PER_SM=3
  b "r$round mem-p3s2" softmax --set PERSISTENT=1 --set PROGRAMS_PER_SM=3 --set num_stages=2
  if [ $round = 1 ]; then b "r$round mem-p2" softmax --set PERSISTENT=1 --set PROGRAMS_PER_SM=2; fi
done
