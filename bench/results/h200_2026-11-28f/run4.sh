#!/usr/bin/env bash
# (a) cross-entropy at 256K vocabularies: programs per SM 3 (heuristic, 76-byte spill) / 2 / none;
# (b) the final heuristic at odd widths (softmax one-program rows uncapped);
# (c) ncu: each cross-entropy launch's duration (count, rows, target fix, sum).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
start=$SECONDS
ce() { echo "== ce $1"; ./tilefuse-bench cross_entropy --dtype bf16 --shape 512x262144,1024x256000,2048x262144 --reps 10 --json $2 | j; }
ce 3 ""; ce 2 "--set min_programs_per_sm=2"; ce 0 "--set min_programs_per_sm=0"; ce 0 "--set min_programs_per_sm=0"; ce 2 "--set min_programs_per_sm=2"; ce 3 ""
echo "ce: $((SECONDS-start)) s"
./tilefuse-bench softmax,cross_entropy --dtype bf16,f16 --shape 8191x4097,16384x4099,4095x8193,2047x16385 --reps 10 --json | j
echo "final: $((SECONDS-start)) s"
for s in 65536x1024 16384x4096 8192x32000; do
  echo "== ncu $s"
  timeout 100 ncu --metrics gpu__time_duration.sum -k regex:cross_entropy -c 8 ./tilefuse-bench cross_entropy --dtype bf16 --shape $s --reps 1 2>&1 | grep -E "cross_entropy|gpu__time_duration" | head -16
done
echo "total: $((SECONDS-start)) s"
