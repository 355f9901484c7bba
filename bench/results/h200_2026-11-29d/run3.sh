#!/usr/bin/env bash
# Run 3: rows a little past a power of two (16385-16388, 65537-65540 columns) on half the
# heuristic's cluster, each program holding twice the columns (5 chunks of 2048), against
# the heuristic (clusters of 4 / 16 programs of 5 x 1024). Two rounds, alternated per shape.
b=${1:?bundle}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
run() { local tag=$1; shift; timeout 60 $b/tilefuse-bench "$@" --reps 10 --json 2>&1 | j | sed "s/^/$tag /"; }
norms=rmsnorm,add_rmsnorm,layernorm
for round in 1 2; do
  for dt in f32 bf16; do
    if [ $dt = f32 ]; then alt="--set BLOCK=2048 --set CHUNKS=5 --set num_warps=16"; alt2="--set BLOCK=2048 --set CHUNKS=5 --set num_warps=8";
    else alt="--set BLOCK=2048 --set CHUNKS=5 --set num_warps=8 --set min_programs_per_sm=3"; alt2="--set BLOCK=2048 --set CHUNKS=5 --set num_warps=8 --set min_programs_per_sm=0"; fi
    for s in 2048x16385 2048x16386 2048x16388; do
      run heur $norms,softmax --dtype $dt --shape $s
      run half_a $norms,softmax --dtype $dt --shape $s --set cluster=2 $alt
      run half_b $norms,softmax --dtype $dt --shape $s --set cluster=2 $alt2
    done
    for s in 512x65537 512x65538 512x65540; do
      run heur $norms,softmax --dtype $dt --shape $s
      run half_a $norms,softmax --dtype $dt --shape $s --set cluster=8 $alt
      run half_b $norms,softmax --dtype $dt --shape $s --set cluster=8 $alt2
    done
  done
done
