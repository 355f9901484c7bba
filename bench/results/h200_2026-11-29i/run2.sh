#!/usr/bin/env bash
# Run 2: why persistent warp-specialized attention is slower (run 1: -5 to -8% at every N).
# ncu (clocks not locked) on bf16 d128 N4096 and N1024, one program per block against
# persistent: duration and the spread of the SMs' active cycles (a static assignment of
# programs waits for the slowest SM; the hardware's block scheduler does not).
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
m=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__cycles_active.avg,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for s in 8x16x4096x128 32x16x1024x128; do
  for v in "" "--set persistent=1"; do
    echo "== ncu $s $v"
    timeout 120 ncu --clock-control none --metrics $m -k regex:attention -s 2 -c 1 $b/tilefuse-bench attention --dtype bf16 --shape $s --reps 1 $v 2>&1 | grep -E "attention_fwd|gpu__|sm__|smsp__|ERR|rror" | head -12
  done
done
