#!/usr/bin/env bash
# Run 1: attention d128 one program per block (the heuristic) against persistent
# warp-specialized programs (`--set persistent=1`), f16 and bf16, alternated, two rounds,
# with cuDNN (peers.py) in the same command; the GPU test of persistent warp-specialized
# attention and GEMM; compute-sanitizer memcheck of the norm backward's and row chunks'
# tail cases (owed by the previous stop) in the background.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
( for t in test_gpu_norms_backward test_gpu_row_chunks; do
    TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 400 compute-sanitizer --tool memcheck $b/$t > /tmp/memcheck_$t.txt 2>&1
    echo "memcheck $t rc=$?" >> /tmp/memcheck_$t.txt
  done ) &
s=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
ours() { timeout 100 $b/tilefuse-bench attention --dtype $1 --shape $s --reps 10 "${@:2}" 2>&1 | grep TFLOP; }
for dt in bf16 f16; do
  for round in 1 2; do
    echo "#### $dt round $round: one program per block"; ours $dt
    echo "#### $dt round $round: persistent"; ours $dt --set persistent=1
  done
done
echo "#### gpu test"
timeout 120 $b/test_gpu_tma 2>&1 | tail -15
p=bf16; for dt in bf16 fp16; do
  echo "#### peers $dt"
  (cd $b/peers && timeout 100 python3 peers.py attention --dtype $dt --d 128 --no-compile 2>/dev/null | grep cudnn
   timeout 100 python3 peers.py attention --dtype $dt --d 128 --causal --no-compile 2>/dev/null | grep cudnn)
done
wait
for t in test_gpu_norms_backward test_gpu_row_chunks; do echo "== memcheck $t"; tail -4 /tmp/memcheck_$t.txt; done
