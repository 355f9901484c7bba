#!/usr/bin/env bash
# Run 5, the final code: (a) the GPU tests whose configs come from the heuristics or hold
# tails (gallery, row chunks, aligned rows, norm backward); (b) the forward norms' final
# rule (one-program tails for the residual RMSNorm, and where they avoid a cluster)
# against chunks (TILEFUSE_ROW_TAIL=0); (c) the width sweep, bf16.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_gallery $b/test_gpu_row_chunks $b/test_gpu_aligned_rows $b/test_gpu_norms_backward $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=4 timeout 150 /tmp/t/run-gpu-tests.sh 2>&1 | tail -6
kf=rmsnorm,add_rmsnorm,layernorm
sf=16384x4099,16384x4098,8192x8195,2048x16385
echo "#### forward final rule"
timeout 60 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%'
echo "#### forward chunks (TILEFUSE_ROW_TAIL=0)"
TILEFUSE_ROW_TAIL=0 timeout 60 $b/tilefuse-bench $kf --dtype bf16 --shape $sf --reps 10 2>&1 | grep '%'
s=$(date +%s); timeout 200 $b/width_sweep.sh $out bf16 2>&1 | tail -3; echo "bf16 sweep took $(( $(date +%s)-s )) s"
