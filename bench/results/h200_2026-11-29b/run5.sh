#!/usr/bin/env bash
# Run 5 (short: the session's last device time): RMSNorm with HELD chunks on the GPU test,
# then RMSNorm and residual RMSNorm at the heuristic's cluster configs with and without
# HELD (new/ only; HELD=0 is the previous code path).
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
(cd new && LD_LIBRARY_PATH=$PWD ./test_gpu_held_loads 2>&1 | tail -2)
for h in 0 16 0 16; do
  echo "== HELD=$h"
  b rmsnorm,add_rmsnorm --dtype bf16 --shape 2048x65536,1024x131072,512x262144 --set HELD=$h
done
