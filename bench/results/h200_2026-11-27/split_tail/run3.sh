#!/usr/bin/env bash
# split tail: the fix-up's slices unrolled (FIXUP_LOOP=0) or in a loop (1, fewer registers); whole programs' cost
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
N="--set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6"
W="--set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4"
B="./tilefuse-bench matmul --dtype bf16"
for r in 1 2; do
echo "== round $r: 132 narrow tiles: matmul / tail kernel without tail, FIXUP_LOOP 0 / 1"
$B --shape 1408x1536x4096,1408x1536x1024 $N --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
for l in 0 1; do $B --shape 1408x1536x4096,1408x1536x1024 $N --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=$l | grep -E "^matmul" | cut -c1-70; done
echo "== round $r: 132 narrow tiles all split 4 ways (SPLIT_TAIL=8), FIXUP_LOOP 0 / 1"
for l in 0 1; do $B --shape 1408x1536x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=8 --set FIXUP_LOOP=$l | grep -E "^matmul" | cut -c1-70; done
echo "== round $r: narrow tail 4, FIXUP_LOOP 0 / 1: 640x4096x4096 1536^3 1100x4096x4096"
for l in 0 1; do $B --shape 640x4096x4096,1536x1536x1536,1100x4096x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=$l | grep -E "^matmul" | cut -c1-70; done
echo "== round $r: wide, 1024x5000x8192 tail 4 FIXUP_LOOP 0 / 1; 132 wide tiles without tail"
for l in 0 1; do $B --shape 1024x5000x8192,1408x3072x4096 $W --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=$l | grep -E "^matmul" | cut -c1-70; done
done
M="gpu__time_duration.sum,launch__registers_per_thread"
for l in 0 1; do
ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:matmul --metrics $M $B --shape 1408x1536x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=$l --reps 8 2>&1 | grep -E "duration|registers"
ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:matmul --metrics $M $B --shape 1408x3072x4096 $W --set SPLIT_K=4 --set SPLIT_TAIL=1 --set FIXUP_LOOP=$l --reps 8 2>&1 | grep -E "duration|registers"
done
