#!/usr/bin/env bash
# Run 8: cross-entropy's rows program with the target logit picked from the registers and
# the one-hot term in the tile (PICK_TARGET=1, new default) against the gather and the
# barrier (PICK_TARGET=0, run 3's program); its GPU test.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
LD_LIBRARY_PATH=$PWD/new new/test_gpu_cross_entropy > /tmp/ce.log 2>&1; echo "test_gpu_cross_entropy rc=$?: $(grep 'test cases:' /tmp/ce.log)"
S=262144x128,131072x256,131072x250,65536x512,262144x512
for p in 0 1 0 1; do
  b cross_entropy --dtype bf16 --shape $S --set PICK_TARGET=$p
done
b cross_entropy --dtype f32 --shape $S --set PICK_TARGET=0
b cross_entropy --dtype f32 --shape $S --set PICK_TARGET=1
