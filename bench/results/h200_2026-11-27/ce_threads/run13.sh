#!/usr/bin/env bash
# Softmax's cap of 8 programs where they leave 24 registers spare (4 warps x 40 values):
# GPU tests, the rule against min_programs_per_sm = the previous rule's, odd and aligned
# widths, bf16 and f16; two rounds.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
for t in test_gpu_gallery test_gpu_row_chunks test_gpu_realigned; do ./$t 2>&1 | tail -3; done
B="--dtype bf16 --reps 20"
for round in 1 2; do
echo "== softmax rule (round $round)"
./tilefuse-bench softmax $B --shape 4096x16383,8192x20001,2048x65537,16384x4099,16384x4097,8192x8191,8192x20000,8192x40000,4096x80000,65536x1024,16384x4096,8192x16384,2048x65536,16384x5000 | grep -E '^softmax'
echo "== the previous rule's cap"
for sp in 4096x16383:6 8192x20001:6 2048x65537:7 16384x4099:6 16384x4097:6 8192x8191:6 8192x20000:6 8192x40000:7 4096x80000:7; do
  s=${sp%:*}; p=${sp#*:}
  ./tilefuse-bench softmax $B --shape $s --set min_programs_per_sm=$p | grep -E '^softmax' | awk -v l="p$p" '{print $1, $3, $4, $6, $7, l}'; done
done
echo "== f16"
./tilefuse-bench softmax --dtype f16 --reps 20 --shape 4096x16383,8192x20001,2048x65537,16384x4099 | grep -E '^softmax'
