#!/usr/bin/env bash
# Which part of PDL costs at 65536x1024: codegen without it (0), wait only, default; ncu durations.
# (Experimental build: TILEFUSE_PDL=0 also dropped the instructions, wait_only dropped the trigger.)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=65536x1024,16384x5000,16384x4096,4096x1024
for round in 1 2; do for pdl in default 0 wait_only; do
  echo "== PDL $pdl round $round"
  for k in softmax rmsnorm; do
    if [ $pdl = default ]; then ./tilefuse-bench $k --dtype bf16 --reps 20 --shape $S | grep -E "^$k "
    else TILEFUSE_PDL=$pdl ./tilefuse-bench $k --dtype bf16 --reps 20 --shape $S | grep -E "^$k "; fi
  done
done; done
for pdl in 1 0; do
echo "== ncu PDL=$pdl"
TILEFUSE_PDL=$pdl timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:softmax ./tilefuse-bench softmax --dtype bf16 --reps 3 --shape 65536x1024 2>&1 | grep -E 'gpu__time|warps_active|dram__' | head -12
done
