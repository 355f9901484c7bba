#!/usr/bin/env bash
# Run 3: (a) the norm backward GPU tests (a one-program tail case: 4096 + 8 at 4099);
# (b) one-program rows a little past a power of two on the cluster programs with clusters
# of one and a tail (BLOCK 4096 + TAIL 8, 8 warps, 2 per SM at 4099) against the previous
# one-tile programs (TILEFUSE_NORM_BWD_TAIL=0), alternated, two rounds; then aligned
# starts (ALIGN_ROWS=1, TAIL=16) and 16 warps at 1 per SM once.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_norms_backward $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=1 timeout 120 /tmp/t/run-gpu-tests.sh 2>&1 | tail -4
k=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
s=16384x4099,16384x4097,16384x4098,16384x4100,8192x8195,32768x2051
for round in 1 2; do
  echo "#### round $round tails"
  TILEFUSE_PRINT_RESOURCES=$((round == 1)) timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $s --reps 10 2>&1 | grep '%\|bwd_cluster'
  echo "#### round $round previous (TILEFUSE_NORM_BWD_TAIL=0)"
  TILEFUSE_NORM_BWD_TAIL=0 timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $s --reps 10 2>&1 | grep '%'
done
echo "#### aligned starts, tail 16"
timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape 16384x4099,16384x4097,8192x8195,32768x2051 --reps 10 --set ALIGN_ROWS=1 --set TAIL=16 2>&1 | grep '%'
echo "#### 16 warps, 1 per SM"
timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape 16384x4099,16384x4098 --reps 10 --set num_warps=16 --set PROGRAMS_PER_SM=1 2>&1 | grep '%'
echo "#### f32 tails / previous"
timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 16384x4099,8192x8195 --reps 10 2>&1 | grep '%'
TILEFUSE_NORM_BWD_TAIL=0 timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 16384x4099,8192x8195 --reps 10 2>&1 | grep '%'
