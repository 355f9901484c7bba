#!/usr/bin/env bash
# Run 5 (not run this session: the device time was spent; for the next one): ncu on the
# row kernel of f32 1024x256000 (16 x 16 warps, CHUNKS 16), old/ (87% of copy: 590d500)
# against new/ (59%): duration, occupancy, launch statistics, warp stalls. Then
# cross-entropy bf16 16384x50304 (79%, softmax 96% on the same config) at one and two
# programs per SM fewer, and ncu's warp stalls of both kernels there.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
prof() {  # prof DIR KERNEL_REGEX BENCH_ARGS...
  (cd $1 && LD_LIBRARY_PATH=$PWD timeout 100 ncu --clock-control none -k regex:"$2" -s 2 -c 1 \
     --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
     ./tilefuse-bench "${@:3}" --reps 2 2>&1 | grep -v '^==PROF==' | head -150)
}
for v in old new; do echo "== ncu $v f32 1024x256000"; prof $v '^cross_entropy_f32$' cross_entropy --dtype f32 --shape 1024x256000; done
cd new
for p in 7 6 5; do
  LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16 --shape 16384x50304 --reps 10 --json --set min_programs_per_sm=$p | j
done
cd ..
echo "== ncu softmax bf16 16384x50304"; prof new '^softmax_bf16$' softmax --dtype bf16 --shape 16384x50304
echo "== ncu cross_entropy bf16 16384x50304"; prof new '^cross_entropy_bf16$' cross_entropy --dtype bf16 --shape 16384x50304
