#!/usr/bin/env bash
# Run 6, the final code's bundle: (a) the norm backward at odd 16-bit widths, cluster
# programs from the rows' aligned starts (default) against ALIGN_ROWS=0 (the previous
# programs; at 16383 the config stays the aligned span's cluster of 4), alternated, two
# rounds, with aligned widths as controls; (b) the whole-program JIT now the default:
# attention d64 and two row shapes that gained in runs 2 and 5; (c) d128 N1024 variants and
# the f32 residual RMSNorm's programs per SM; (d) the whole GPU suite.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
odd=4096x16387,4096x16383,2048x32771,1024x65537,4096x16386,8192x16384
for round in 1 2; do
  for v in "" "--set ALIGN_ROWS=0"; do
    echo "#### backward round $round ${v:-default}"
    timeout 90 $b/tilefuse-bench rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute --dtype bf16 \
      --shape $odd --reps 10 $v 2>&1 | grep '%'
  done
done
echo "#### backward f16 and f32, default"
timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f16,f32 --shape 4096x16387,2048x32771 --reps 10 2>&1 | grep '%'
echo "#### attention d64 and rows, defaults (whole-program JIT)"
timeout 60 $b/tilefuse-bench attention --dtype f16,bf16 --shape 32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c --reps 10 2>&1 | grep TFLOP
timeout 60 $b/tilefuse-bench softmax,add_rmsnorm,cross_entropy --dtype bf16,f32 --shape 1024x100002,2048x16385,16384x50304 --reps 10 2>&1 | grep '%'
echo "#### d128 f16 N1024: 64-key blocks, 3 stages"
for v in "" "--set BLOCK_N=64" "--set num_stages=3"; do
  timeout 30 $b/tilefuse-bench attention --dtype f16 --shape 32x16x1024x128 --reps 10 $v 2>&1 | grep TFLOP
done
echo "#### f32 residual RMSNorm on clusters of chunks: min_programs_per_sm 4 against the default"
for v in "" "--set min_programs_per_sm=4"; do
  timeout 40 $b/tilefuse-bench add_rmsnorm,rmsnorm --dtype f32 --shape 2048x16385,4096x16387,2048x20001,1024x24577 --reps 10 $v 2>&1 | grep '%'
done
echo "#### GPU suite (elapsed before: $SECONDS s)"
time timeout $((545 - SECONDS)) $b/run-gpu-tests.sh 2>&1
