#!/usr/bin/env bash
# Run 3: (a) d64 attention, f16, the heuristic (64-row single role, 3 per SM) against the
# warp-specialized ping-pong schedule at 128x128 (2 and 3 stages) and 128x256, alternated,
# two rounds; (b) the f32 rows at 2048x16385 that lost under the whole-program JIT in
# run 2: registers and programs per SM both ways, and the loss against min_programs_per_sm;
# (c) compute-sanitizer memcheck and racecheck on the warp-specialized d128 GPU test.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s64=32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
ws="--set warp_specialize=1 --set BLOCK_M=128 --set PV_LAG=1 --set RESCALE_LATE=1 --set TMA_STORE=0 --set num_warps=8 --set min_programs_per_sm=1"
for round in 1 2; do
  echo "#### d64 round $round: heuristic"
  timeout 60 $b/tilefuse-bench attention --dtype f16 --shape $s64 --reps 10 2>&1 | grep TFLOP
  for v in "--set BLOCK_N=128 --set num_stages=2" "--set BLOCK_N=128 --set num_stages=3" "--set BLOCK_N=256 --set num_stages=2"; do
    echo "#### d64 round $round: ws $v"
    timeout 60 $b/tilefuse-bench attention --dtype f16 --shape $s64 --reps 10 $ws $v 2>&1 | grep 'TFLOP\|rror'
  done
done
for round in 1 2; do
  for jit in 0 1; do
    echo "#### f32 2048x16385 round $round whole-program $jit"
    TILEFUSE_CACHE_DIR=$(mktemp -d) TILEFUSE_WHOLE_PROGRAM_JIT=$jit TILEFUSE_PRINT_RESOURCES=$((round == 1)) timeout 60 \
      $b/tilefuse-bench softmax,rmsnorm,add_rmsnorm --dtype f32 --shape 2048x16385,4096x16387 --reps 10 2>&1 | grep 'copy\|tilefuse: kernel' | grep -v device
  done
  for m in 4 6 8; do
    echo "#### f32 2048x16385 round $round whole-program 1 min_programs_per_sm=$m"
    TILEFUSE_CACHE_DIR=$(mktemp -d) TILEFUSE_WHOLE_PROGRAM_JIT=1 timeout 60 $b/tilefuse-bench add_rmsnorm,softmax --dtype f32 \
      --shape 2048x16385 --reps 10 --set min_programs_per_sm=$m 2>&1 | grep '%'
  done
done
echo "#### compute-sanitizer on the warp-specialized d128 attention test (through the kernel cache)"
for tool in memcheck racecheck; do
  TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 120 compute-sanitizer --tool $tool $b/test_gpu_tma \
    -tc='*warp-specialized attention d128*' 2>&1 | tail -4
done
