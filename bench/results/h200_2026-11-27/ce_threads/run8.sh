#!/usr/bin/env bash
# The cross-entropy programs-per-SM rule (spare 20, up to 8) on the new build: GPU tests,
# then 4-warp chunked configs at 6/7/8 programs per SM for softmax and cross-entropy on
# clusters of 4, 8 and 16 at 40/48/56 values per thread, the rule at the standard
# vocabularies (bf16, f16) and the peers.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
./test_gpu_cross_entropy 2>&1 | tail -3
./test_autotune_gpu 2>&1 | tail -3
B="--dtype bf16 --reps 20"
r() { local k=$1 shape=$2 label=$3; shift 3; local sets=() a; for a in "$@"; do sets+=(--set "$a"); done
  ./tilefuse-bench $k $B --shape $shape "${sets[@]}" | grep -E "^$k" | awk -v l="$label" '{print $1, $3, $4, $6, $7, l}'; }
rule() { ./tilefuse-bench $1 $B --shape $2 | grep -E "^$1" | awk '{print $1, $3, $4, $6, $7, "rule", $8, $9, $10, $11, $12, $13, $14}'; }
echo "== sweep: programs per SM at 4 warps"
for s in 8192x20000 8192x24000 8192x28000 8192x40000 8192x45000 8192x50304 4096x80000 4096x90000 4096x100000; do
  for k in softmax cross_entropy; do rule $k $s
    for p in 6 7 8; do r $k $s "p$p" num_warps=4 min_programs_per_sm=$p; done
  done
done
echo "== the rule, bf16 and f16"
S="8192x32000,4096x128256,2048x151936,16384x50304,8192x32768,4096x30000,4096x65536,16384x24000,2048x128257,4096x50257,1024x256000,8192x100000"
./tilefuse-bench cross_entropy $B --shape $S | grep -E '^cross'
./tilefuse-bench cross_entropy --dtype f16 --reps 20 --shape 8192x32000,4096x128256,2048x151936,16384x50304 | grep -E '^cross'
python3 peers.py cross_entropy --dtype bf16 2>&1 | grep -A20 '# summary'
