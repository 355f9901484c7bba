#!/usr/bin/env bash
# Run 10: where the persistent warp-specialized attention's extra cycles go (run 3: 18%
# more cycles per issued instruction): ncu's warp stall reasons per issued instruction,
# bf16 d128 N4096, one program per block against persistent.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
for v in "" "--set persistent=1"; do
  echo "== ncu 8x16x4096x128 $v"
  timeout 100 ncu --clock-control none --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,gpu__time_duration.sum -k regex:attention -s 2 -c 1 $b/tilefuse-bench attention --dtype bf16 --shape 8x16x4096x128 --reps 1 $v 2>&1 | grep -E "stalled|gpu__time" | awk '$NF+0 >= 0.05 || /gpu__time/'
done
