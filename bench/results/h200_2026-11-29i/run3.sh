#!/usr/bin/env bash
# Run 3: run 2 found every SM busy ~9% more cycles when persistent, with the same clock and
# nearly the same SASS in the key loop: where do the cycles go? ncu warp stall reasons,
# L2 hit rate and DRAM bytes, bf16 d128 N4096, one program per block against persistent.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
m=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex.sum
for v in "" "--set persistent=1"; do
  echo "== ncu 8x16x4096x128 $v"
  timeout 150 ncu --clock-control none --section WarpStateStats --metrics $m -k regex:attention -s 2 -c 1 $b/tilefuse-bench attention --dtype bf16 --shape 8x16x4096x128 --reps 1 $v 2>&1 | grep -vE "^\s*$|----|Section:|OPT |WRN |==PROF" | head -40
done
