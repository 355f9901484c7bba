#!/usr/bin/env bash
# Run 5 (the final code): the whole GPU suite, four binaries at once; the d64 causal
# heuristic (64-key blocks up to N 1024) against 128-key blocks, and cuDNN, causal d64,
# f16 and bf16; variants of the two causal N1024 tilings; compute-sanitizer racecheck of
# the producer-copies test.
b=${1:?bundle}; out=${2:?out}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
s=32x16x1024x64c,16x16x2048x64c,32x16x1024x128
bench() { (cd $b && LD_LIBRARY_PATH=$PWD timeout 200 ./tilefuse-bench attention "$@" --reps 10 2>&1 | grep TFLOP); }
for dt in bf16 f16; do
  for round in 1 2; do
    echo "#### $dt round $round: heuristic"; bench --dtype $dt --shape $s
    echo "#### $dt round $round: BLOCK_N=128"; bench --dtype $dt --shape 32x16x1024x64c --set BLOCK_N=128
  done
  pdt=$dt; [ $dt = f16 ] && pdt=fp16
  echo "#### cudnn $dt"
  (cd $b/peers && timeout 200 python3 peers.py attention --dtype $pdt --d 64 --n 1024 --n 2048 --causal --no-compile 2>/dev/null | grep cudnn | grep TFLOP/s
   timeout 200 python3 peers.py attention --dtype $pdt --d 128 --n 1024 --no-compile 2>/dev/null | grep cudnn | grep TFLOP/s)
done
c=32x16x1024x128c
echo "#### d128 causal N1024 variants (bf16)"
for v in "" "--set PV_LAG=0" "--set RESCALE_LATE=0" "--set warp_specialize=0" "--set Q_VIEW=1"; do
  echo "## $v"; bench --dtype bf16 --shape $c $v
done
echo "#### d64 causal N1024 variants (bf16)"
for v in "" "--set min_programs_per_sm=2" "--set num_stages=3" "--set BLOCK_M=128 --set num_warps=8 --set min_programs_per_sm=0"; do
  echo "## $v"; bench --dtype bf16 --shape 32x16x1024x64c $v
done
echo "#### suite"
(cd $b && TEST_JOBS=4 timeout 330 ./run-gpu-tests.sh 2>&1 | tail -26)
echo "#### racecheck (producer copies)"
LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 150 compute-sanitizer --tool racecheck $b/test_gpu_tma -tc='*producer copies*' 2>&1 | tail -4
