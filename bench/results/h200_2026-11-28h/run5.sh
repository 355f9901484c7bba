#!/usr/bin/env bash
# Run 5: ncu on the row kernel of f32 1024x256000 (16 x 16 warps, CHUNKS 16), old/ (87%
# of copy) against new/ (59%): duration, occupancy and launch statistics, warp stalls.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
for v in old new; do
  echo "== $v"
  (cd $v && LD_LIBRARY_PATH=$PWD timeout 100 ncu --clock-control none -k regex:'^cross_entropy_f32$' -s 2 -c 1 \
     --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
     ./tilefuse-bench cross_entropy --dtype f32 --shape 1024x256000 --reps 2 2>&1 | grep -v '^==PROF==' | sed -n '/cross_entropy_f32/,$p' | head -120)
done
