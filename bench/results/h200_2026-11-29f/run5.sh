#!/usr/bin/env bash
# Run 5: the whole-program JIT (TILEFUSE_WHOLE_PROGRAM_JIT=1) against the linker's
# relocatable compile on the kernels run 2 did not cover: attention d64 (single role: only
# the warp-specialized kernels were whole-program before), GEMM bf16 at the peers'
# shapes (+ the GELU epilogue), FP8 GEMM, the backward passes and SwiGLU; alternated, two
# rounds. Then d64 attention at N1024 with 64-key blocks or 4 programs per SM.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b
s64=32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
gemm=4096x4096x4096,8192x8192x8192,8192x8192x1024,16384x4096x4096,4000x4000x4000,4096x4096x4096+gelu,4000x4000x4000+gelu
rows=16384x4096,8192x16384,16384x5000,4096x16387
for round in 1 2; do
  for jit in 0 1; do
    echo "#### round $round whole-program $jit"
    export TILEFUSE_CACHE_DIR=$(mktemp -d) TILEFUSE_WHOLE_PROGRAM_JIT=$jit
    timeout 60 $b/tilefuse-bench attention --dtype f16,bf16 --shape $s64 --reps 10 2>&1 | grep TFLOP
    timeout 60 $b/tilefuse-bench matmul --dtype bf16 --shape $gemm --reps 10 2>&1 | grep TFLOP
    timeout 40 $b/tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 4096x4096x4096,8192x8192x8192 --reps 10 2>&1 | grep TFLOP
    timeout 90 $b/tilefuse-bench softmax_bwd,rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,swiglu,swiglu_bwd --dtype bf16 \
      --shape $rows --reps 10 2>&1 | grep '%'
  done
done
unset TILEFUSE_WHOLE_PROGRAM_JIT
export TILEFUSE_CACHE_DIR=$(mktemp -d)
for v in "--set BLOCK_N=64 --set num_stages=3" "--set min_programs_per_sm=4" "--set BLOCK_N=64 --set num_stages=3 --set min_programs_per_sm=4"; do
  echo "#### d64 N1024 $v"
  timeout 30 $b/tilefuse-bench attention --dtype f16,bf16 --shape 32x16x1024x64,8x16x4096x64c --reps 10 $v 2>&1 | grep 'TFLOP\|rror'
done
