#!/usr/bin/env bash
# Run 4: the f32 norm rules (this build, new/) against the previous heuristic (old/: run
# 1-3's build), alternated, two rounds, f32 at the standard shapes and others (% of copy);
# then the GPU tests of the row kernels' programs (test_gpu_row_chunks with the f32 case,
# test_gpu_held_loads).
b=${1:?bundle}; out=${2:?out}
mkdir -p /tmp/co /tmp/cn
bench() { local dir=$1 cache=$2 k=$3 s=$4; (cd $dir && LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$cache timeout 120 ./tilefuse-bench $k --dtype f32 --shape $s --reps 10 2>&1 | grep -E " ok | FAIL|rror" | cut -c1-150); }
shapes=512x262144,256x262144,128x262144,1024x262140,1024x131072,2048x65536,4096x32768,8192x16384,16384x16384
for round in 1 2; do
  for k in rmsnorm layernorm add_rmsnorm; do
    echo "#### round $round $k old"; bench $b/../old /tmp/co $k $shapes
    echo "#### round $round $k new"; bench $b /tmp/cn $k $shapes
  done
done
echo "#### tests"
cd $b && export LD_LIBRARY_PATH=$PWD TILEFUSE_CACHE_DIR=$(mktemp -d)
for t in test_gpu_row_chunks test_gpu_held_loads; do timeout 200 ./$t 2>&1 | tail -3; done
