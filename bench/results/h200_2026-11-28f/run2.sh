#!/usr/bin/env bash
# A/B in one command, alternating order: (a) row programs per SM from the width
# (default) vs uncapped (min_programs_per_sm=0, what widths of 1 mod 8 got before);
# (b) TILEFUSE_APPROX_FTZ 0 / 1.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
jt() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"tflops": ([0-9.]*).*"check": ([a-z]*).*/\1 \2 \3 \4 \5/'; }
start=$SECONDS
H=8191x4097,4095x8193,16383x1025,2047x16385
heur() { echo "== heuristic $1"; ./tilefuse-bench softmax,cross_entropy --dtype bf16 --shape $H --reps 10 --json $2 | j; }
heur default ""; heur uncapped "--set min_programs_per_sm=0"; heur uncapped "--set min_programs_per_sm=0"; heur default ""
echo "heuristic: $((SECONDS-start)) s"
F=16384x4096,8191x4097,4096x30011,65536x1024
ftz() { echo "== ftz $1"; TILEFUSE_APPROX_FTZ=$1 ./tilefuse-bench softmax,cross_entropy,swiglu,swiglu_bwd,softmax_bwd,layernorm --dtype bf16 --shape $F --reps 10 --json | j;
        TILEFUSE_APPROX_FTZ=$1 ./tilefuse-bench attention --dtype bf16 --shape 4x16x4096x64,4x16x4096x128,4x16x4096x128c,1x16x16384x128c --reps 10 --json | tee -a attn_raw.json | jt; }
ftz 0; ftz 1; ftz 1; ftz 0
echo "total: $((SECONDS-start)) s"
grep -m1 '"kernel"' attn_raw.json
