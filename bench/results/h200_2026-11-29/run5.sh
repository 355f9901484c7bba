#!/usr/bin/env bash
# Run 5 (not run this session: the device time was spent; for the next one), on a bundle
# of the final commit (new/: tools/device-bundle.sh's bundle): the loaded kernels'
# registers and programs per SM (TILEFUSE_PRINT_RESOURCES) at the shapes of this stop;
# cross-entropy's target logit picked from the registers against loaded on one-program
# rows (the load waits on the target's: two memory latencies per row); bf16 4096x128256
# at 5 and 6 programs per SM; then the whole GPU suite.
cd "${1:-$(dirname "$0")}"  # the bundle: new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
echo "== resources"
(cd new && TILEFUSE_PRINT_RESOURCES=1 LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 \
   --shape 16384x50304,1024x256000,2048x151936,262144x512 --reps 2 2>&1 | grep -E "^tilefuse: kernel|cross_entropy ")
for r in 1 2; do
  for p in 0 1; do
    echo "== PICK_TARGET=$p round $r"
    b cross_entropy --dtype bf16,f32 --shape 262144x512,65536x1024,32768x1000,16384x4096,16384x4099,8192x8192 --set PICK_TARGET=$p
  done
  for p in 5 6; do b cross_entropy --dtype bf16 --shape 4096x128256 --set min_programs_per_sm=$p; done
done
echo "== GPU suite"
new/run-gpu-tests.sh 2>&1
