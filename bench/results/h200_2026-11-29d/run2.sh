#!/usr/bin/env bash
# Run 2: (a) attention d128 f16 at the peers' shapes, the heuristic's 2 stages against 3
# (231424 bytes of shared memory: now within sm_90's 232448), two rounds alternated;
# (b) the width sweep (bf16, f32) on the current code.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
shapes=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
for round in 1 2; do
  for st in 2 3; do
    echo "== round $round stages $st"
    timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $shapes --set num_stages=$st --reps 10 2>&1 | grep -v '^\s*$'
  done
done
cp $b/width_sweep.sh $b/ 2>/dev/null
s=$(date +%s); timeout 250 $b/width_sweep.sh $out bf16 2>&1 | tail -3; echo "bf16 sweep took $(( $(date +%s)-s )) s"
s=$(date +%s); timeout 180 $b/width_sweep.sh $out f32 2>&1 | tail -3; echo "f32 sweep took $(( $(date +%s)-s )) s"
