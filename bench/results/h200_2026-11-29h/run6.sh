#!/usr/bin/env bash
# Run 6 (run as one command line): run 5's GPU tests again with a longer limit (150 s cut
# the gallery off in run 5, so it printed nothing): gallery, row chunks, aligned rows,
# norm backward on the final bundle.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
mkdir -p /tmp/t && cp $b/test_gpu_gallery $b/test_gpu_row_chunks $b/test_gpu_aligned_rows $b/test_gpu_norms_backward $b/libtilefuse.so* $b/run-gpu-tests.sh /tmp/t/
(TEST_JOBS=4 timeout 270 /tmp/t/run-gpu-tests.sh > $out/6_final_tests.txt 2>&1; echo rc=$? >> $out/6_final_tests.txt)
