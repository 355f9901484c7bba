#!/usr/bin/env bash
# Run 1: the previous stop's final commit (new/: the whole bundle). ncu of cross-entropy
# f32 1024x256000 (16 x 16 warps, one program per SM: 59% of copy, 87% before the target
# column moved into the row program), cross-entropy bf16 16384x50304 at 7/6/5 programs
# per SM, ncu of softmax against cross-entropy there; compute-sanitizer memcheck of the
# barrier and cross-entropy GPU tests; then the GPU suite as far as the call's time goes.
cd "${1:-$(dirname "$0")}"  # the bundle: new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
prof() {  # prof DIR KERNEL_REGEX BENCH_ARGS...
  (cd $1 && LD_LIBRARY_PATH=$PWD timeout 100 ncu --clock-control none -k regex:"$2" -s 2 -c 1 \
     --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
     ./tilefuse-bench "${@:3}" --reps 2 2>&1 | grep -v '^==PROF==' | head -170)
}
echo "== ncu new f32 1024x256000"; prof new '^cross_entropy_f32$' cross_entropy --dtype f32 --shape 1024x256000
cd new
for p in 7 6 5; do
  LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16 --shape 16384x50304 --reps 10 --json --set min_programs_per_sm=$p | j
done
LD_LIBRARY_PATH=$PWD ./tilefuse-bench softmax --dtype bf16 --shape 16384x50304 --reps 10 --json | j
cd ..
echo "== ncu softmax bf16 16384x50304"; prof new '^softmax_bf16$' softmax --dtype bf16 --shape 16384x50304
echo "== ncu cross_entropy bf16 16384x50304"; prof new '^cross_entropy_bf16$' cross_entropy --dtype bf16 --shape 16384x50304
echo "== memcheck"
(cd new && LD_LIBRARY_PATH=$PWD timeout 150 compute-sanitizer --tool memcheck ./test_gpu_ops -tc='*barrier*' 2>&1 | tail -4)
(cd new && LD_LIBRARY_PATH=$PWD timeout 200 compute-sanitizer --tool memcheck ./test_gpu_cross_entropy 2>&1 | tail -4)
echo "== GPU suite"
new/run-gpu-tests.sh 2>&1
