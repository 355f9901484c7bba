#!/usr/bin/env bash
# Softmax with up to 7 programs per SM on clusters of 8+: GPU tests, the rule against
# min_programs_per_sm=6 at widths on clusters of 4/8/16, and the peers in the same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
./test_gpu_gallery 2>&1 | tail -3
./test_gpu_row_chunks 2>&1 | tail -3
B="--dtype bf16 --reps 20"
S="8192x4096,2048x65536,4096x128256,16384x50304,8192x50304,8192x100000,4096x100000,8192x28000,8192x45000,4096x90000,8192x40000,4096x80000,16384x32000,2048x151936"
for round in 1 2; do
echo "== softmax rule (round $round)"; ./tilefuse-bench softmax $B --shape $S | grep -E '^softmax'
echo "== softmax, 6 programs per SM where the rule asks 7"
for s in 16384x50304 8192x50304 8192x100000 4096x100000 8192x45000 4096x90000 8192x40000 4096x80000; do
  ./tilefuse-bench softmax $B --shape $s --set min_programs_per_sm=6 | grep -E '^softmax' | awk '{print $1, $3, $4, $6, $7, "p6"}'; done
done
echo "== f16 / f32 rule"
./tilefuse-bench softmax --dtype f16 --reps 20 --shape 16384x50304,8192x100000,4096x128256 | grep -E '^softmax'
python3 peers.py softmax --dtype bf16 --shape 16384x50304 --shape 8192x100000 --shape 4096x128256 --shape 8192x4096 2>&1 | grep -A20 '# summary'
