#!/usr/bin/env bash
# Cross-entropy at the two vocabularies under 80%: spreads and programs per SM around the heuristic.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
try() { local s=$1; shift; ./tilefuse-bench cross_entropy --dtype bf16 --reps 20 --shape $s "$@" | grep -E "^cross" | awk -v c="$*" '{print $1, $3, $4, $6, "|", $7, $8, $9, $10, $11, $12, $13, $14, "|", c}'; }
for round in 1 2; do
echo "== round $round"
s=4096x128256
try $s
for p in 5 6 7; do try $s --set BLOCK=4096 --set CHUNKS=2 --set num_warps=4 --set cluster=16 --set min_programs_per_sm=$p; done
try $s --set BLOCK=2048 --set CHUNKS=4 --set num_warps=4 --set cluster=16 --set min_programs_per_sm=6
for p in 4 5; do try $s --set BLOCK=8192 --set CHUNKS=1 --set num_warps=8 --set cluster=16 --set min_programs_per_sm=$p; done
s=2048x151936
try $s
for p in 3 5; do try $s --set min_programs_per_sm=$p; done
for p in 5 6; do try $s --set BLOCK=2048 --set CHUNKS=5 --set num_warps=4 --set cluster=16 --set min_programs_per_sm=$p; done
try $s --set BLOCK=4096 --set CHUNKS=3 --set num_warps=8 --set cluster=16 --set min_programs_per_sm=4
done
