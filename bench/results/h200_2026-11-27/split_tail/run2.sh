#!/usr/bin/env bash
# split tail: where its time goes. The tail kernel with no tail (132 tiles) against matmul's; S = 2/4/8 at 640; ncu
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_ops -tc="*last program*" 2>&1 | grep -E "ERROR|values|test cases" | head -12
N="--set BLOCK_M=128 --set BLOCK_N=128 --set num_warps=8 --set num_stages=6"
W="--set BLOCK_M=128 --set BLOCK_N=256 --set num_warps=8 --set num_stages=4"
B="./tilefuse-bench matmul --dtype bf16"
for r in 1 2; do
echo "== round $r: 132 narrow tiles, matmul / tail kernel without tail"
$B --shape 1408x1536x4096,1408x1536x1024 $N --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
$B --shape 1408x1536x4096,1408x1536x1024 $N --set SPLIT_K=4 --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-70
echo "== round $r: 132 wide tiles, matmul / tail kernel without tail"
$B --shape 1408x3072x4096 $W --set SPLIT_K=1 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
$B --shape 1408x3072x4096 $W --set SPLIT_K=4 --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-70
echo "== round $r: 640x4096x4096 narrow, S = 2 / 4 / 8; all 160 split 4 ways (SPLIT_TAIL=2); split-K 4 (second kernel)"
for s in 2 4 8; do $B --shape 640x4096x4096 $N --set SPLIT_K=$s --set SPLIT_TAIL=1 | grep -E "^matmul" | cut -c1-70; done
$B --shape 640x4096x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=2 | grep -E "^matmul" | cut -c1-70
$B --shape 640x4096x4096 $N --set SPLIT_K=4 --set SPLIT_TAIL=0 | grep -E "^matmul" | cut -c1-70
done
echo "== ncu"
M="gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,launch__grid_size,launch__registers_per_thread,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,dram__bytes.sum"
for cfg in "--set SPLIT_K=1 --set SPLIT_TAIL=0" "--set SPLIT_K=4 --set SPLIT_TAIL=1" "--set SPLIT_K=4 --set SPLIT_TAIL=2"; do
echo "-- 640x4096x4096 $cfg"
ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:matmul --metrics $M $B --shape 640x4096x4096 $N $cfg --reps 8 2>&1 | grep -E "matmul|duration|cycles_active|grid_size|registers|shared_mem|warps_active|bytes" | head -14
done
