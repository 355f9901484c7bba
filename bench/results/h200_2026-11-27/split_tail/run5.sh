#!/usr/bin/env bash
# split tail: a slice's fixed cost. 132 128x128 tiles split 4 ways: the second-kernel split-K against the tail kernel; ncu
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
N="--set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6"
B="./tilefuse-bench matmul --dtype bf16 --shape 1408x1536x4096"
for r in 1 2; do
$B $N --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
$B $N --set SPLIT_K=4 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
$B $N --set SPLIT_K=4 --set SPLIT_TAIL=8 | grep -E "^matmul" | cut -c1-70
done
for t in 0 8; do
echo "-- ncu SPLIT_TAIL=$t"
ncu --clock-control none --launch-skip 6 --launch-count 2 --section SpeedOfLight --section WarpStateStats --section LaunchStats $B $N --set SPLIT_K=4 --set SPLIT_TAIL=$t --reps 8 2>&1 | grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Shared Memory Config|Stall|Warp Cycles Per Issued|DRAM Throughput|Memory Throughput|Compute \(SM\)" | head -40
done
