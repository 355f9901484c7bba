#!/usr/bin/env bash
# LayerNorm on wide rows against RMSNorm: ncu (the output kept only the first 12 metric lines), and a config sweep.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers
for k in layernorm rmsnorm; do for s in 2048x65536 8192x16384; do
  echo "== ncu $k $s"
  timeout 100 ncu --clock-control none --metrics $M -k regex:"^$k" ./tilefuse-bench $k --dtype bf16 --reps 1 --shape $s 2>&1 | grep -E 'gpu__|dram__|lts__|l1tex__|sm__|launch__' | sort | uniq | head -12
done; done
B="--dtype bf16 --reps 20"
try() { local k=$1 s=$2; shift 2; ./tilefuse-bench $k $B --shape $s "$@" | grep -E "^$k " | awk -v c="$*" '{print $1, $3, $4, $6, "|", c}'; }
for s in 2048x65536 1024x131072; do
  echo "== sweep $s"
  try layernorm $s
  try rmsnorm $s
  for p in 5 6; do try layernorm $s --set min_programs_per_sm=$p; done
  try layernorm $s --set SHIFTED=0
  try layernorm $s --set RELOAD=1
  n=${s#*x}
  c16=$((n / 4096)); c8=$((n / 8192))
  [ $c16 -le 16 ] && for p in 0 6 8; do try layernorm $s --set BLOCK=4096 --set CHUNKS=1 --set num_warps=4 --set cluster=$c16 --set min_programs_per_sm=$p; done
  [ $c8 -le 16 ] && for p in 0 4; do try layernorm $s --set BLOCK=4096 --set CHUNKS=2 --set num_warps=4 --set cluster=$c8 --set min_programs_per_sm=$p; done
  [ $c16 -le 16 ] && try layernorm $s --set BLOCK=2048 --set CHUNKS=2 --set num_warps=2 --set cluster=$c16 --set min_programs_per_sm=8
done
echo "== sweep 8192x16384"
s=8192x16384
try layernorm $s; try rmsnorm $s
for p in 3 4 5; do try layernorm $s --set min_programs_per_sm=$p; done
for cl in 4 8; do for p in 0 8; do try layernorm $s --set BLOCK=$((16384 / cl)) --set CHUNKS=1 --set num_warps=4 --set cluster=$cl --set min_programs_per_sm=$p; done; done
try layernorm $s --set BLOCK=1024 --set CHUNKS=4 --set num_warps=4 --set cluster=4 --set min_programs_per_sm=6
echo "== sweep 512x262144"
s=512x262144
try layernorm $s; try rmsnorm $s
try layernorm $s --set RELOAD=0
for p in 2 3 4; do try layernorm $s --set min_programs_per_sm=$p; done
try layernorm $s --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set cluster=16 --set RELOAD=1 --set min_programs_per_sm=3
