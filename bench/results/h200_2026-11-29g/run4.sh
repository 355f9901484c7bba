#!/usr/bin/env bash
# Run 4: where the aligned-start cluster backward's time goes at bf16 4096x16387.
# (a) cluster spreads by --set (the heuristic's 4 x 8192 on 8 warps wastes half its
# positions: 16394 of 32768); (b) ncu stall and memory sections of the heuristic config
# with ALIGN_ROWS=1 against the aligned width 16384 (2 x 8192, 16 warps, 92% of copy).
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s=4096x16387
bench() { timeout 40 $b/tilefuse-bench rmsnorm_bwd --dtype bf16 --shape $1 --reps 10 "${@:2}" 2>&1 | grep '%'; }
echo "#### spreads (ALIGN_ROWS=1 unless said)"
bench $s --set ALIGN_ROWS=1
bench $s --set ALIGN_ROWS=1 --set num_warps=16 --set PROGRAMS_PER_SM=1
bench $s --set ALIGN_ROWS=1 --set BLOCK=16384 --set cluster=2 --set num_warps=16 --set PROGRAMS_PER_SM=1
bench $s --set ALIGN_ROWS=1 --set BLOCK=4096 --set cluster=8 --set num_warps=4 --set PROGRAMS_PER_SM=4
bench $s --set ALIGN_ROWS=1 --set num_stages=3
bench $s --set ALIGN_ROWS=0 --set num_warps=16 --set PROGRAMS_PER_SM=1
bench 4096x16384
sec="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
for v in "$s --set ALIGN_ROWS=1" "$s --set ALIGN_ROWS=0" "4096x16384"; do
  echo "#### ncu rmsnorm_bwd $v"
  set -- $v
  timeout 120 ncu $sec -k regex:rmsnorm_bwd_cluster -c 1 $b/tilefuse-bench rmsnorm_bwd --dtype bf16 --shape $1 --reps 2 "${@:2}" 2>&1 \
    | grep -E 'Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|Issued Ipc|No Eligible|Warp Cycles Per Issued|Stall|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Block Limit|Executed Ipc|One or More' | head -40
done
