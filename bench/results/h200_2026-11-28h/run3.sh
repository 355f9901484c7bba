#!/usr/bin/env bash
# Run 3: f32 1024x256000 (16 programs of 16 warps, one per SM) lost 87 -> 59% of copy in
# run 2 with PTX that differs only at the row's end. The SASS of both builds, the same
# shape under other configs and neighbouring shapes, old/ against new/; then the GPU
# tests run 1 did not reach (TMA, the compiler's own GPU tests) and the autotuner's.
cd "${1:-$(dirname "$0")}"  # the bundle: old/ and new/
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
A="cross_entropy --dtype f32 --set BLOCK=1024 --set CHUNKS=16 --set num_warps=16 --set cluster=16 --set COUNT=0 --set REDUCTION=2"
for v in old new; do (cd $v && LD_LIBRARY_PATH=$PWD ./tilefuse-compile $A --emit sass -o "${OUT:-/tmp}/3_sass_$v.txt" && LD_LIBRARY_PATH=$PWD ./tilefuse-compile $A --emit sass-summary 2>&1 | head -40); done
b() { (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype f32 --shape $2 --reps 10 --json "${@:3}" | j); }
for v in old new old new; do
  echo "== $v"
  b $v 1024x256000,2048x256000,1024x200000,512x256000
  b $v 1024x256000 --set PICK_TARGET=0
  b $v 1024x256000 --set PICK_TARGET=1
  b $v 1024x256000 --set BLOCK=2048 --set CHUNKS=8
  b $v 1024x256000 --set BLOCK=16384 --set CHUNKS=1
  b $v 1024x256000 --set REDUCTION=0
done
export LD_LIBRARY_PATH=$PWD/new
for t in test_autotune_gpu test_gpu_tma test_nvptx_gpu; do echo "== $t"; timeout 200 new/$t 2>&1 | tail -6; done
