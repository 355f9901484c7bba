#!/usr/bin/env bash
# ncu: softmax 16384x5000 bf16 vs f16 with PDL default / wait_only / 0 (experimental build of run3).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for d in bf16 f16; do for pdl in 1 wait_only 0; do
echo "== ncu $d PDL=$pdl"
TILEFUSE_PDL=$pdl timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.sum,launch__occupancy_limit_registers,launch__registers_per_thread -k regex:softmax ./tilefuse-bench softmax --dtype $d --reps 2 --shape 16384x5000 2>&1 | grep -E 'gpu__time|warps_active|dram__|ctas|launch__' | sort | uniq -c | head -12
done; done
