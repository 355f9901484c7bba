#!/usr/bin/env bash
# Cross-entropy vs softmax at the same configs (bf16): warps x programs per SM; per-kernel
# times and registers under ncu; peers in the same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
CE="8192x32000,4096x128256,2048x151936,16384x50304"
echo "== heuristic"; ./tilefuse-bench cross_entropy,softmax $B --shape $CE
for w in 4 8; do for p in 0 4 5 6; do
  echo "== 8192x32000 num_warps=$w min_programs_per_sm=$p"
  ./tilefuse-bench cross_entropy,softmax $B --shape 8192x32000 --set num_warps=$w --set min_programs_per_sm=$p
done; done
echo "== ncu 8192x32000"
ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed ./tilefuse-bench cross_entropy,softmax --dtype bf16 --reps 1 --shape 8192x32000 2>&1 | grep -E "^  [a-z_]|gpu__time|launch__|sm__warps|dram__" | head -80
python3 peers.py cross_entropy --dtype bf16 2>&1 | tail -30
echo "== norm backward baseline"
./tilefuse-bench layernorm_bwd,rmsnorm_bwd $B --shape 65536x1024,16384x4096,8192x16384,2048x65536,16384x5000
