#!/usr/bin/env bash
# Run 2: old/ = 590d500 (f32 1024x256000 at 87% of copy), new/ = the previous stop's final
# commit (59%), new2/ = new plus the target logit out of the cluster exchange (its owner
# stores the loss). ncu of f32 1024x256000 on old/ (new/'s is in run 1); cross-entropy
# bf16 on clusters at the heuristic's programs per SM and at 4-8 (new, new2); the two GPU
# test binaries run 1 did not reach, and new2's cross-entropy GPU test.
cd "${1:-$(dirname "$0")}"  # the bundle
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
prof() {  # prof DIR KERNEL_REGEX BENCH_ARGS...
  (cd $1 && LD_LIBRARY_PATH=$PWD timeout 100 ncu --clock-control none -k regex:"$2" -s 2 -c 1 \
     --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
     ./tilefuse-bench "${@:3}" --reps 2 2>&1 | grep -v '^==PROF==' | head -170)
}
b() { (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --reps 10 --json "${@:2}" | j); }
echo "== ncu old f32 1024x256000"; prof old '^cross_entropy_f32$' cross_entropy --dtype f32 --shape 1024x256000
echo "== f32 1024x256000, 2048x151936: old new new2"
for v in old new new2; do b $v --dtype f32 --shape 1024x256000,2048x151936; done
S=16384x50304,8192x32000,4096x128256,2048x151936,1024x256000,8192x24000,4096x50257
for v in new new2; do
  echo "== $v bf16 heuristic"; b $v --dtype bf16 --shape $S
  for p in 4 5 6 7 8; do echo "== $v bf16 min_programs_per_sm=$p"; b $v --dtype bf16 --shape $S --set min_programs_per_sm=$p; done
done
echo "== one-program rows: new new2"
for v in new new2; do b $v --dtype bf16,f32 --shape 65536x1024,262144x512,16384x4099,32768x1000; done
echo "== tests"
(cd new2 && LD_LIBRARY_PATH=$PWD ./test_gpu_cross_entropy 2>&1 | tail -3)
new/run-gpu-tests.sh 2>&1
