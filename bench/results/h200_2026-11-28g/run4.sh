#!/usr/bin/env bash
# Run 4: where the clusters' loss in run 3 comes from: ncu's per-kernel times, old/ and
# new/, at f32 1024x256000 and bf16 8192x32000 (mean).
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
for s in "f32 1024x256000" "bf16 8192x32000"; do
  set -- $s
  for v in old new; do echo "== ncu $v $s"; (cd $v && LD_LIBRARY_PATH=$PWD ncu --metrics gpu__time_duration.sum,sm__cycles_active.avg,launch__cluster_dim_x -k regex:cross_entropy -c 8 ./tilefuse-bench cross_entropy --dtype $1 --shape $2 --reps 2 2>&1 | grep -E "^  cross|gpu__time|sm__cycles|cluster_dim" | tail -24); done
done
