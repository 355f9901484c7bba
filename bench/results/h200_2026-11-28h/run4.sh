#!/usr/bin/env bash
# Run 4: the target column in the stored tiles on clusters of 16+-warp programs
# (TARGET_IN_TILE), after a barrier elsewhere (new/), against the previous stop's final
# commit (old/), one round each; the in-tile way forced on one-program rows; the GPU
# tests of cross-entropy and the autotuner.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=1024x256000,4096x128256,2048x151936,8192x32000,16384x50304,65536x1024,262144x512,16384x4099
run() { echo "== $1 ${@:2}"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape ${S2:-$S} --reps 10 --json "${@:2}" | j); }
run old; run new
S2=65536x1024,16384x4096 run new --set TARGET_IN_TILE=1
export LD_LIBRARY_PATH=$PWD/new
for t in test_gpu_cross_entropy test_autotune_gpu; do echo "== $t"; timeout 150 new/$t 2>&1 | tail -30; done
