#!/usr/bin/env bash
# Run 6 (the final code): the whole GPU suite, four binaries at once; compute-sanitizer
# memcheck of the persistent warp-specialized tests in the background; softmax's last
# chunk as a tail, the heuristic before (old/) and after, alternated, bf16 two rounds,
# f32 once, with a power of two as a control.
b=${1:?bundle}; out=${2:?out}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
s=8192x4097,4096x8193,2048x16385,2048x16388,1024x32769,512x65537,512x65540,256x131073,2048x16384
run() { (cd $1 && LD_LIBRARY_PATH=$PWD timeout 100 ./tilefuse-bench softmax --dtype $2 --shape $s --reps 10 2>&1 | grep '%'); }
for round in 1 2; do
  echo "#### bf16 round $round: old"; run $b/../old bf16
  echo "#### bf16 round $round: new"; run $b bf16
done
echo "#### f32: old"; run $b/../old f32
echo "#### f32: new"; run $b f32
export LD_LIBRARY_PATH=$b
( TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 300 compute-sanitizer --tool memcheck $b/test_gpu_tma -tc='*persistent*' > /tmp/memcheck.txt 2>&1
  echo "memcheck rc=$?" >> /tmp/memcheck.txt ) &
echo "#### suite"
TEST_JOBS=4 timeout 330 $b/run-gpu-tests.sh 2>&1 | tail -30
wait
echo "#### memcheck (persistent warp-specialized attention and GEMM)"; tail -5 /tmp/memcheck.txt
