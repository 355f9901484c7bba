#!/usr/bin/env bash
# Run 3: staged checked loads (rows from their aligned start copied by cp.async, the
# partly valid runs read whole where `readable`). (a) the GPU tests they touch; (b) the
# norm backward at odd widths, ALIGN_ROWS=1 (aligned starts, now staged) against the
# default (2-byte accesses), alternated, two rounds, aligned widths as controls.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && for t in test_gpu_staged test_gpu_norms_backward test_gpu_aligned_rows test_gpu_realigned test_gpu_row_chunks; do cp $b/$t /tmp/t/; done
cp $b/libtilefuse.so* /tmp/t/; cp $b/run-gpu-tests.sh /tmp/t/
TEST_JOBS=5 timeout 200 /tmp/t/run-gpu-tests.sh 2>&1
shapes=4096x16387,2048x32771,1024x65537,4096x16386,16384x4099,8192x16384
for round in 1 2; do
  for v in "--set ALIGN_ROWS=1" ""; do
    echo "#### backward round $round ${v:-default}"
    timeout 100 $b/tilefuse-bench rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd --dtype bf16 \
      --shape $shapes --reps 10 $v 2>&1 | grep '%'
  done
done
echo "#### f16 and f32, ALIGN_ROWS=1 then default"
for v in "--set ALIGN_ROWS=1" ""; do
  timeout 60 $b/tilefuse-bench rmsnorm_bwd,layernorm_bwd --dtype f16,f32 --shape 4096x16387,2048x32771 --reps 10 $v 2>&1 | grep '%'
done
