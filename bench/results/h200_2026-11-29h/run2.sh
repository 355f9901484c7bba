#!/usr/bin/env bash
# Run 2: (a) GPU tests of tail tiles (row programs, aligned rows, norm backward); (b) the
# norm backward's tails now on 8 warps against chunks (TILEFUSE_NORM_BWD_TAIL=0); (c) the
# forward row kernels with tails (2 x (8192 + 8) at 16385-16392 positions) against the
# previous heuristic (TILEFUSE_ROW_TAIL=0), alternated, two rounds; f32 once.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_norms_backward $b/test_gpu_row_chunks $b/test_gpu_aligned_rows $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=3 timeout 150 /tmp/t/run-gpu-tests.sh 2>&1 | tail -8
kb=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
sb=4096x16387,4096x16386,2048x32771
echo "#### backward tails (8 warps)"
TILEFUSE_PRINT_RESOURCES=1 timeout 80 $b/tilefuse-bench $kb --dtype bf16 --shape $sb --reps 10 2>&1 | grep '%\|_bwd_cluster'
echo "#### backward chunks"
TILEFUSE_NORM_BWD_TAIL=0 timeout 80 $b/tilefuse-bench $kb --dtype bf16 --shape $sb --reps 10 2>&1 | grep '%'
echo "#### backward f32 tails"
timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 4096x16387 --reps 10 2>&1 | grep '%'
kf=softmax,rmsnorm,add_rmsnorm,layernorm
sf=2048x16385,2048x16386,2048x16388,2048x16387,1024x32771,512x65537,512x65540
for round in 1 2; do
  echo "#### round $round forward tails"
  TILEFUSE_PRINT_RESOURCES=$((round == 1)) timeout 100 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%\|registers' | grep -v 'shifted_copies'
  echo "#### round $round forward previous (TILEFUSE_ROW_TAIL=0)"
  TILEFUSE_ROW_TAIL=0 timeout 100 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%'
done
echo "#### f32 forward tails / previous"
timeout 80 $b/tilefuse-bench $kf --dtype f32 --shape 2048x16385,1024x32771,512x65537 --reps 10 2>&1 | grep '%'
TILEFUSE_ROW_TAIL=0 timeout 80 $b/tilefuse-bench $kf --dtype f32 --shape 2048x16385,1024x32771,512x65537 --reps 10 2>&1 | grep '%'
