#!/usr/bin/env bash
# Run 2 (run 11 of h200_2026-11-29e): the row kernels loaded through the
# whole-program JIT (TILEFUSE_WHOLE_PROGRAM_JIT=1) against the linker's relocatable
# compile (default), alternated per round, and the registers each gets
# (TILEFUSE_PRINT_RESOURCES). Locally ptxas gives softmax bf16 23 registers whole against
# 29 relocatable, cross-entropy 38 against 45. Kernels: the row kernels at their standard
# shapes plus odd widths and cluster rows; cross-entropy; the norms' backward.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b
rows=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000,512x262144,2048x16385,32737x1025,1024x100002
for round in 1 2; do
  for jit in 0 1; do
    echo "#### round $round whole-program $jit"
    export TILEFUSE_CACHE_DIR=$(mktemp -d)
    TILEFUSE_WHOLE_PROGRAM_JIT=$jit timeout 200 $b/tilefuse-bench softmax,rmsnorm,layernorm,add_rmsnorm --dtype bf16,f32 \
      --shape $rows --reps 10 2>&1 | grep -v '^\s*$'
    TILEFUSE_WHOLE_PROGRAM_JIT=$jit timeout 120 $b/tilefuse-bench cross_entropy --dtype bf16,f32 \
      --shape 8192x32000,16384x50304,4096x128256,2048x151936,4096x50257,262144x128 --reps 10 2>&1 | grep -v '^\s*$'
  done
done
echo "#### resources, softmax and cross-entropy bf16"
for jit in 0 1; do
  TILEFUSE_CACHE_DIR=$(mktemp -d) TILEFUSE_WHOLE_PROGRAM_JIT=$jit TILEFUSE_PRINT_RESOURCES=1 \
    $b/tilefuse-bench softmax,cross_entropy --dtype bf16 --shape 16384x4096,4096x128256 --reps 2 2>&1 | grep 'tilefuse: kernel'
done
echo "#### compute-sanitizer on the warp-specialized d128 attention test (through the kernel cache)"
for tool in memcheck racecheck; do
  TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 150 compute-sanitizer --tool $tool $b/test_gpu_tma \
    -tc='*warp-specialized attention d128*' 2>&1 | tail -4
done
