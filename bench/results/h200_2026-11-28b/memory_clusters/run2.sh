#!/usr/bin/env bash
# Which memory-cluster test case hangs (each alone, line-buffered, with and without PDL),
# then the bench of run1 (knob registered now).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for tc in '*launch after launch*' '*persistent loops*' '*sibling reductions*' '*larger than the GPU*'; do
  for pdl in 1 0; do
    echo "== $tc PDL=$pdl"; TILEFUSE_PDL=$pdl timeout 25 stdbuf -oL ./test_gpu_memory_clusters -tc="$tc" 2>&1 | grep -E "test cases|assertions|ERROR|FAIL|error|CHECK|logged|:=" | head -12; echo "rc=${PIPESTATUS[0]}"
  done
done
show() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['results']: print(sys.argv[2], r['kernel'], r['dtype'], r['shape'], '%.1f'%r['pct_copy'], r['check'], r['config'].replace(' num_stages=1',''))
" "$1" "$2"; }
S=32x1048576,8x4194304,16x1048576,64x1048576,32x1048577,128x262145,16x524288,4x4194304
for round in 1; do
  for v in split mem; do
    if [ $v = split ]; then e=0; else e=1; fi
    TILEFUSE_MEMORY_CLUSTERS=$e timeout 100 ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm --dtype bf16 --shape $S --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -3 /tmp/a.err; show /tmp/a.json "r$round $v"
    TILEFUSE_MEMORY_CLUSTERS=$e timeout 60 ./tilefuse-bench softmax,rmsnorm --dtype f32 --shape 32x1048576,8x4194304,16x1048577 --reps 10 --json > /tmp/a.json 2>/tmp/a.err || tail -3 /tmp/a.err; show /tmp/a.json "r$round $v"
  done
done
