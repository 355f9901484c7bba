#!/usr/bin/env bash
# Run 7: rows after the count kernel read its word after their row loads, where the
# previous code read 1/count (new), against the previous commit (old/), on the cluster
# shapes that lost in runs 5-6; alternating.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
S=1024x256000,1024x151936,8192x32000,4096x128256,65536x1024
run() { echo "== $1"; (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 --shape $S --reps 10 --json | j); }
run old; run new; run new; run old
