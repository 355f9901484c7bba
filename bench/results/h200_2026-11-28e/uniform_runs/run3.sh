#!/usr/bin/env bash
# ncu (source-level SASS counters) of softmax and LayerNorm bf16 8191x4097 with the
# warp-uniform finishing off and on.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
B=./tilefuse-bench
for k in softmax layernorm; do for u in 0 1; do
  export TILEFUSE_UNIFORM_RUNS=$u
  ncu --clock-control none -k regex:^$k --launch-skip 5 --launch-count 1 --set full --import-source no -o p_${k}_$u -f $B $k --dtype bf16 --shape 8191x4097 --reps 6 > /dev/null 2>&1
  echo "== ncu $k 8191x4097 UNIFORM_RUNS=$u"
  ncu --import p_${k}_$u.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Registers Per|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Block Limit Reg" | head -24
  ncu --import p_${k}_$u.ncu-rep --page source --csv --print-source sass > p_${k}_$u.csv 2>&1
  python3 sass_stalls.py p_${k}_$u.csv 30
  cp p_${k}_$u.csv $OUT/
done; done
