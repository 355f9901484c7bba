#!/usr/bin/env bash
# odd widths: where the time goes (ncu source-level stalls), and cross-entropy's kernels
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
echo "== bench"
for s in 16384x4099 16384x4104 16384x4098 4096x16391 4096x16384; do
  $B softmax,rmsnorm --dtype bf16 --shape $s | grep -E "^(softmax|rmsnorm)" | cut -c1-110
  $B softmax,rmsnorm --dtype bf16 --shape $s --set ALIGN_ROWS=1 | grep -E "^(softmax|rmsnorm)" | cut -c1-110
done
NCU="ncu --clock-control none -k regex:^softmax --launch-skip 5 --launch-count 1"
for v in "16384x4099 0" "16384x4099 1" "16384x4104 0" "4096x16391 0" "4096x16391 1"; do
  set -- $v
  echo "== ncu softmax $1 ALIGN_ROWS=$2"
  $NCU --set full --import-source no -o $OUT/sm_$1_a$2 -f $B softmax --dtype bf16 --shape $1 --set ALIGN_ROWS=$2 --reps 6 > /dev/null 2>&1
  ncu --import $OUT/sm_$1_a$2.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Registers Per|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Block Limit|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Stall" | head -40
  ncu --import $OUT/sm_$1_a$2.ncu-rep --page source --csv --print-source sass > $OUT/sm_$1_a$2_sass.csv 2>&1
  ncu --import $OUT/sm_$1_a$2.ncu-rep --page raw --csv > $OUT/sm_$1_a$2_raw.csv 2>&1
done
echo "== cross-entropy kernels"
ncu --clock-control none -k regex:cross_entropy --launch-skip 8 --launch-count 8 --metrics gpu__time_duration.sum $B cross_entropy --dtype bf16 --shape 4096x128256 --reps 4 2>&1 | grep -E "cross_entropy|duration" | head -40
$B cross_entropy --dtype bf16 --shape 4096x128256,2048x151936 | grep -E "^cross" | cut -c1-110
