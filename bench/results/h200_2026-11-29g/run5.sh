#!/usr/bin/env bash
# Run 5: cluster programs of the norm backward holding chunks that cover their share of
# the row (set_cluster_chunks: 16387 bf16 columns as 4 x 3 x 2048, not 4 x 8192) against
# TILEFUSE_NORM_BWD_CHUNKS=0 (one tile of the next power of two), each with the rows'
# own starts (default) and from their aligned starts (ALIGN_ROWS=1, staged checked
# loads), alternated, two rounds; aligned widths as controls. Then the GPU tests of the
# norm backward.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
shapes=4096x16387,2048x32771,1024x65537,4096x16386,8192x20001,8192x16384
for round in 1 2; do
  for chunks in 1 0; do
    for v in "" "--set ALIGN_ROWS=1"; do
      echo "#### round $round chunks=$chunks ${v:-own starts}"
      TILEFUSE_NORM_BWD_CHUNKS=$chunks timeout 100 $b/tilefuse-bench rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd --dtype bf16 \
        --shape $shapes --reps 10 $v 2>&1 | grep '%'
    done
  done
done
echo "#### f32, chunks, own starts / aligned starts"
for v in "" "--set ALIGN_ROWS=1"; do
  timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f32 --shape 4096x16387,2048x32771 --reps 10 $v 2>&1 | grep '%'
done
echo "#### tests"
mkdir -p /tmp/t && cp $b/test_gpu_norms_backward $b/test_gpu_staged $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=2 timeout 150 /tmp/t/run-gpu-tests.sh 2>&1
