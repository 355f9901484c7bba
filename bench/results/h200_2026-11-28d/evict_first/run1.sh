#!/usr/bin/env bash
# Odd 16-bit widths: what the per-run mask tests cost. Baseline against TILEFUSE_EXP=nofinish
# (partly valid runs not finished: wrong at rows' edges, timing only), and the aligned twin
# on the same config; ncu source-level stalls of RMSNorm (sass_stalls.py: the copy in
# results/h200_2026-11-28/readable/, placed beside this script in the bundle).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
for round in 1 2; do
for k in rmsnorm softmax layernorm add_rmsnorm; do
  echo "== $k round $round heuristic odd / aligned"
  $B $k --dtype bf16 --shape 8191x4097,8192x4096,2048x16385,32737x1025 --reps 10 --json | grep -E '"kernel"' | cut -c1-40,100-250
  echo "== $k round $round nofinish odd"
  TILEFUSE_EXP=nofinish $B $k --dtype bf16 --shape 8191x4097,2048x16385,32737x1025 --reps 10 --json | grep -E '"kernel"' | cut -c1-40,100-250
  echo "== $k round $round aligned on 5x1024w4"
  $B $k --dtype bf16 --shape 8192x4096 --reps 10 --json --set BLOCK=1024 --set CHUNKS=5 --set num_warps=4 | grep -E '"kernel"' | cut -c1-40,100-250
done
done
NCU="ncu --clock-control none -k regex:^rmsnorm --launch-skip 5 --launch-count 1"
for v in "8191x4097 base" "8191x4097 nofinish" "8192x4096 base"; do
  set -- $v
  extra=""; [ $1 = 8192x4096 ] && extra="--set BLOCK=1024 --set CHUNKS=5 --set num_warps=4"
  [ $2 = nofinish ] && export TILEFUSE_EXP=nofinish || unset TILEFUSE_EXP
  $NCU --set full --import-source no -o rn_$1_$2 -f $B rmsnorm --dtype bf16 --shape $1 $extra --reps 6 > /dev/null 2>&1
  echo "== ncu rmsnorm $1 $2"
  ncu --import rn_$1_$2.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Registers Per|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit|Block Limit" | head -24
  ncu --import rn_$1_$2.ncu-rep --page source --csv --print-source sass > rn_$1_$2.csv 2>&1
  python3 sass_stalls.py rn_$1_$2.csv 30
  cp rn_$1_$2.csv $OUT/ 2>/dev/null
done
unset TILEFUSE_EXP
