#!/usr/bin/env bash
# Run 2: the producer copies attention's last P.V-behind V block (and Q's with Q_VIEW):
# bf16 d128 against the previous build (old/), the knob off (TILEFUSE_PRODUCER_COPIES=0),
# Q_VIEW=1, and persistent with and without Q_VIEW, alternated, two rounds; then the GPU
# tests of attention on the new build and memcheck of the new test.
b=${1:?bundle}; out=${2:?out}
s=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,32x16x1024x128c
declare -A cache
for v in old new off qview pers persq; do cache[$v]=$(mktemp -d); done
run() {  # variant dir [env...] -- [--set ...]
  local v=$1 dir=$2; shift 2
  (cd $dir && env TILEFUSE_CACHE_DIR=${cache[$v]} LD_LIBRARY_PATH=$PWD "$@" 2>&1 | grep TFLOP)
}
for round in 1 2; do
  echo "#### round $round: old"; run old $b/../old timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10
  echo "#### round $round: new"; run new $b timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10
  echo "#### round $round: new, TILEFUSE_PRODUCER_COPIES=0"; run off $b TILEFUSE_PRODUCER_COPIES=0 timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10
  echo "#### round $round: new, Q_VIEW=1"; run qview $b timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10 --set Q_VIEW=1
  echo "#### round $round: new, persistent"; run pers $b timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10 --set persistent=1
  echo "#### round $round: new, persistent Q_VIEW=1"; run persq $b timeout 150 ./tilefuse-bench attention --dtype bf16 --shape $s --reps 10 --set persistent=1 --set Q_VIEW=1
done
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
echo "#### gpu tests"
timeout 200 $b/test_gpu_tma 2>&1 | tail -4
timeout 200 $b/test_gpu_gallery -tc='*ttention*' 2>&1 | tail -3
echo "#### memcheck"
TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 200 compute-sanitizer --tool memcheck $b/test_gpu_tma -tc='*producer copies*' 2>&1 | tail -5
