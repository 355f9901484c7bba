#!/usr/bin/env bash
# Run 1: (a) the norm backward GPU tests with tail tiles (TAIL); (b) the heuristic with
# tails (2 x (8192 + 8) at 16387 bf16 from aligned starts) against the previous one
# (TILEFUSE_NORM_BWD_TAIL=0: chunks, 4 x 3 x 2048), alternated, two rounds; f32; (c) tails
# on 8-warp programs, one per SM (no register cap).
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_norms_backward $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=1 timeout 120 /tmp/t/run-gpu-tests.sh 2>&1 | tail -15
shapes=4096x16387,4096x16383,2048x32771,1024x65537,4096x16386,8192x16384
k=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
for round in 1 2; do
  echo "#### round $round tails"
  TILEFUSE_PRINT_RESOURCES=$((round == 1)) timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $shapes --reps 10 2>&1 | grep '%\|registers'
  echo "#### round $round previous (TILEFUSE_NORM_BWD_TAIL=0)"
  TILEFUSE_NORM_BWD_TAIL=0 timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $shapes --reps 10 2>&1 | grep '%'
done
echo "#### f32 tails / previous"
timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 4096x16387,2048x32771,1024x65537 --reps 10 2>&1 | grep '%'
TILEFUSE_NORM_BWD_TAIL=0 timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 4096x16387,2048x32771,1024x65537 --reps 10 2>&1 | grep '%'
echo "#### 16387 bf16: tails on 4 x (4096 + 8), 8 warps, 1 per SM; 2 x (8192 + 8) on 8 warps"
timeout 60 $b/tilefuse-bench $k --dtype bf16 --shape 4096x16387 --reps 10 --set cluster=4 --set BLOCK=4096 --set TAIL=8 --set num_warps=8 --set PROGRAMS_PER_SM=1 2>&1 | grep '%'
timeout 60 $b/tilefuse-bench $k --dtype bf16 --shape 4096x16387 --reps 10 --set num_warps=8 2>&1 | grep '%'
