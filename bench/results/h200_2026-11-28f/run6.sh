#!/usr/bin/env bash
# Cross-entropy with the scans at 16384 x 32 warps (new) against the previous commit
# (old/), alternating; then the cross-entropy GPU tests and bench/ce_scans.
cd "$(dirname "$0")"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=65536x1024,32768x1000,16384x4096,8192x32000,4096x128256,262144x512
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new; run new; run old
export LD_LIBRARY_PATH=$PWD/new
new/test_gpu_cross_entropy 2>&1 | tail -3
new/ce_scans 50
