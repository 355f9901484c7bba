#!/usr/bin/env bash
# Run 6, the final code: (a) the GPU tests of the norm backward and the staged loads;
# (b) the norm backward's new defaults (chunked cluster programs; aligned starts on odd
# 16-bit widths over clusters of up to 4, any for the residual) against the previous
# defaults (TILEFUSE_NORM_BWD_CHUNKS=0 and ALIGN_ROWS=0), alternated, two rounds for
# bf16; (c) one-tile programs at 16384x4099 from their aligned starts (readable runs now),
# held (PREFETCH) or staged.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_norms_backward $b/test_gpu_staged $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=2 timeout 150 /tmp/t/run-gpu-tests.sh 2>&1
shapes=4096x16387,4096x16383,2048x32771,1024x65537,8192x20001,4096x16386,16384x4099,8192x16384
k=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
for round in 1 2; do
  echo "#### round $round new defaults"
  timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $shapes --reps 10 2>&1 | grep '%'
  echo "#### round $round previous defaults"
  TILEFUSE_NORM_BWD_CHUNKS=0 timeout 100 $b/tilefuse-bench $k --dtype bf16 --shape $shapes --reps 10 --set ALIGN_ROWS=0 2>&1 | grep '%'
done
echo "#### f16 and f32: new, previous"
timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f16,f32 --shape 4096x16387,2048x32771,8192x20001 --reps 10 2>&1 | grep '%'
TILEFUSE_NORM_BWD_CHUNKS=0 timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f16,f32 --shape 4096x16387,2048x32771,8192x20001 --reps 10 --set ALIGN_ROWS=0 2>&1 | grep '%'
echo "#### one-tile 16384x4099 from aligned starts: held, staged"
for v in "--set PREFETCH=1 --set num_stages=1" "--set PREFETCH=0 --set num_stages=2"; do
  timeout 40 $b/tilefuse-bench rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd --dtype bf16 --shape 16384x4099 --reps 10 --set ALIGN_ROWS=1 $v 2>&1 | grep '%'
done
