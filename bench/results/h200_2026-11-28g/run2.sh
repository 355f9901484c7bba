#!/usr/bin/env bash
# Run 2: the count word polled with one relaxed load beside the row loads (new), against
# the previous commit (old/), alternating; the
# cross-entropy GPU tests, memcheck of the many-rows and finish cases, and ncu's
# per-kernel times at 65536x1024 bf16.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=65536x1024,32768x1000,16384x4096,8192x32000,4096x128256,262144x512,16384x4099,8191x4097,1024x256000
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new; run new; run old
export LD_LIBRARY_PATH=$PWD/new
new/test_gpu_cross_entropy 2>&1 | tail -3
compute-sanitizer --tool memcheck new/test_gpu_cross_entropy -tc='*many*,*finish*' 2>&1 | tail -4
for v in old new; do echo "== ncu $v"; (cd $v && LD_LIBRARY_PATH=$PWD ncu --metrics gpu__time_duration.sum -k regex:cross_entropy -c 8 ./tilefuse-bench cross_entropy --dtype bf16 --shape 65536x1024 --reps 2 2>&1 | grep -E "cross_entropy|gpu__time" | tail -24); done
