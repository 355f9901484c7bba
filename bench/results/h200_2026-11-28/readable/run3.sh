#!/usr/bin/env bash
# readable lanes (2): softmax and add_rmsnorm A/B, then ncu of softmax 16384x4099 with readable runs against 16384x4104
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
S=16384x4099,16384x4098,8192x8197,4096x16383,4096x30011,2048x65537,8192x20001
for k in softmax add_rmsnorm; do
  echo "-- $k heuristic"
  $B $k --shape $S | grep -E "^$k " | cut -c1-120
  for rd in 0 1; do
    echo "-- $k ALIGN_ROWS=1 READABLE=$rd"
    TILEFUSE_READABLE=$rd $B $k --shape $S --set ALIGN_ROWS=1 | grep -E "^$k " | cut -c1-120
  done
done > $OUT/3_ab.txt 2>&1
cat $OUT/3_ab.txt
NCU="ncu --clock-control none -k regex:^softmax --launch-skip 5 --launch-count 1"
for v in "16384x4099 1" "16384x4104 0"; do
  set -- $v
  $NCU --set full --import-source no -o sm_$1_a$2 -f $B softmax --dtype bf16 --shape $1 --set ALIGN_ROWS=$2 --reps 6 > /dev/null 2>&1
  echo "== ncu softmax $1 ALIGN_ROWS=$2"
  ncu --import sm_$1_a$2.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Registers Per|DRAM Throughput|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit" | head -20
  ncu --import sm_$1_a$2.ncu-rep --page source --csv --print-source sass > $OUT/sm_$1_a$2_sass.csv 2>&1
done
