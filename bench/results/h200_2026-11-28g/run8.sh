#!/usr/bin/env bash
# Run 8 (final code): rows after the count kernel load its 1/count as before (new) against
# the previous commit (old/), one round each; the GPU tests of cross-entropy, the ops
# (atomics, waits), the split rows (ordered waits) and the gallery; memcheck of the
# many-rows and finish cases.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=1024x256000,1024x151936,8192x32000,4096x128256,65536x1024,262144x512,16384x4096,32768x1000,16384x4099
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new
export LD_LIBRARY_PATH=$PWD/new
for t in test_gpu_cross_entropy test_gpu_ops test_gpu_split_rows test_gpu_gallery; do echo "== $t"; timeout 150 new/$t 2>&1 | tail -3; done
compute-sanitizer --tool memcheck new/test_gpu_cross_entropy -tc='*many*,*finish*' 2>&1 | tail -2
