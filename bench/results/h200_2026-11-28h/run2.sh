#!/usr/bin/env bash
# Run 2: cross-entropy's target column written by its row program after a barrier, the
# finish kernel only summing the loss (none: no finish launch) — new/ — against the
# previous stop's final commit (old/), alternating, mean; none and sum once each; softmax
# at the cluster vocabularies for comparison; the GPU tests of cross-entropy, the ops
# (barrier) and the autotuner (the heuristic's config found in the space).
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=65536x1024,262144x512,32768x1000,16384x4096,16384x4099,8192x32000,16384x50304,4096x128256,2048x151936,1024x256000
run() { echo "== $1 ${@:2}"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape ${S2:-$S} --reps 10 --json "${@:2}" | j); }
run old; run new; run new; run old
S2=65536x1024,262144x512,8192x32000,1024x151936
for r in 0 1; do run old --set REDUCTION=$r; run new --set REDUCTION=$r; done
echo "== softmax"; (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench softmax --dtype bf16,f32 --shape 8192x32000,16384x50304,4096x128256,2048x151936 --reps 10 --json | j)
export LD_LIBRARY_PATH=$PWD/new
for t in test_gpu_cross_entropy test_gpu_ops test_autotune_gpu; do echo "== $t"; timeout 120 new/$t 2>&1 | tail -12; done
