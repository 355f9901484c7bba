#!/usr/bin/env bash
# Run 8: the final code's row-chunk and split-row GPU tests (f32 rows of 262143 columns on
# chunks in registers; which LayerNorm configs take clusters for few rows); then, as far as
# the device time goes, run 7's bf16 LayerNorm cluster variants (one round).
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
for t in test_gpu_row_chunks test_gpu_split_rows; do echo "#### $t"; timeout 90 ./$t 2>&1 | tail -3; done
sed -i 's/^for round in 1 2; do/for round in 1; do/' run7.sh
timeout 70 bash run7.sh $b $out
