#!/usr/bin/env bash
# Run 4: (a) the whole GPU suite; (b) the norm backward's one-row tails by the final rule
# (aligned starts for odd 16-bit widths; own starts for the plain RMSNorm and f32) against
# the one-tile programs (TILEFUSE_NORM_BWD_TAIL=0); (c) the forward norms' one-program
# rows with a tail (4096 + 8 at 4099) against chunks (TILEFUSE_ROW_TAIL=0), two rounds.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
TEST_JOBS=8 timeout 280 $b/run-gpu-tests.sh 2>&1 | tail -26
kb=rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute
sb=16384x4099,16384x4098,32768x2051,8192x8195
echo "#### backward one-row tails"
timeout 80 $b/tilefuse-bench $kb --dtype bf16 --shape $sb --reps 10 2>&1 | grep '%'
echo "#### backward one-tile (TILEFUSE_NORM_BWD_TAIL=0)"
TILEFUSE_NORM_BWD_TAIL=0 timeout 80 $b/tilefuse-bench $kb --dtype bf16 --shape $sb --reps 10 2>&1 | grep '%'
kf=rmsnorm,add_rmsnorm,layernorm
sf=16384x4097,16384x4099,16384x4098,16384x4100,32768x2051,8192x8195
for round in 1 2; do
  echo "#### round $round forward one-program tails"
  timeout 80 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%'
  echo "#### round $round forward chunks (TILEFUSE_ROW_TAIL=0)"
  TILEFUSE_ROW_TAIL=0 timeout 80 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%'
done
