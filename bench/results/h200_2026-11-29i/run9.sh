#!/usr/bin/env bash
# Run 9: the warp-specialized consumers' register budget: the producer warpgroup keeping
# 24 registers instead of 40 (TILEFUSE_PRODUCER_REGS=24: the consumers get 240 instead of
# 232), one program per block and persistent, bf16 d128, alternated, two rounds. Each
# variant has a kernel cache of its own.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b
s=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c
att() { TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 60 $b/tilefuse-bench attention --dtype bf16 --shape $s --reps 10 "$@" 2>&1 | grep TFLOP; }
for round in 1 2; do
  echo "#### round $round: producer 40"; att
  echo "#### round $round: producer 24"; TILEFUSE_PRODUCER_REGS=24 att
  echo "#### round $round: persistent, producer 40"; att --set persistent=1
  echo "#### round $round: persistent, producer 24"; TILEFUSE_PRODUCER_REGS=24 att --set persistent=1
done
