#!/usr/bin/env bash
# Run 3: the held-load GPU tests and those of the kernels that now take HELD, with
# compute-sanitizer memcheck of the held cases; then the heuristics before (old/ =
# bee2bf0) and after (new/ = HELD in the softmax and cross-entropy rules) over the
# standard and wide shapes, two rounds.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local d=$1; shift; (cd $d && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
for t in test_gpu_held_loads test_gpu_cross_entropy test_gpu_row_chunks test_gpu_split_rows; do
  echo "== $t"; (cd new && LD_LIBRARY_PATH=$PWD ./$t 2>&1 | tail -3)
done
echo "== memcheck: held loads"
(cd new && LD_LIBRARY_PATH=$PWD compute-sanitizer --tool memcheck ./test_gpu_held_loads 2>&1 | tail -4)
echo "== memcheck: cross-entropy CHUNKS case (HELD in place)"
(cd new && LD_LIBRARY_PATH=$PWD compute-sanitizer --tool memcheck ./test_gpu_cross_entropy -tc="*CHUNKS*" 2>&1 | tail -4)
echo "== racecheck: held rows"
(cd new && LD_LIBRARY_PATH=$PWD compute-sanitizer --tool racecheck ./test_gpu_held_loads -tc="*in place*" 2>&1 | tail -4)
for r in 1 2; do
  for d in old new; do
    echo "== round $r $d"
    b $d softmax --dtype bf16,f16,f32 --shape 2048x65536,1024x131072,512x262144,4096x50304,8192x32000
    b $d cross_entropy --dtype bf16,f32 --shape 8192x32000,16384x50304,4096x128256,2048x151936,1024x256000
  done
done
