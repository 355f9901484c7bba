#!/usr/bin/env bash
# Cross-entropy's scans over one program per 4096 rows, the last combining (new), against
# one program of 16384-row steps on 32 warps (old/: the previous commit), alternating; then
# the GPU tests, memcheck of the many-rows case, and bench/ce_scans.
cd "$(dirname "$0")"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=65536x1024,32768x1000,262144x512,16384x4096,8192x32000,4096x128256
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new; run new; run old
export LD_LIBRARY_PATH=$PWD/new
new/test_gpu_cross_entropy 2>&1 | tail -3
timeout 120 compute-sanitizer --tool memcheck new/test_gpu_cross_entropy -tc='*many rows*' 2>&1 | grep -E "ERROR SUMMARY|test cases"
new/ce_scans 50
