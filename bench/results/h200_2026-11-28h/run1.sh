#!/usr/bin/env bash
# Run 1: the previous stop's final commit (new/: the whole bundle) against 12ae205 (old/)
# on cross-entropy, one round each (cluster shapes first: the previous stop shipped their
# code unmeasured), then the whole GPU suite on new/.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=1024x256000,1024x151936,8192x32000,4096x128256,2048x151936,16384x50304,65536x1024,262144x512,16384x4099
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new
echo "== GPU suite"
new/run-gpu-tests.sh 2>&1
