#!/usr/bin/env bash
# Run 1: the previous stop's run 5 items on its final commit (old/ = bee2bf0): the loaded
# kernels' resources at cross-entropy's shapes, PICK_TARGET 0/1 on one-program rows, bf16
# 4096x128256 at 5 and 6 programs per SM. Then softmax rows of 256K-1M columns on clusters
# whose programs keep HELD of their CHUNKS tiles in shared memory (new/), against the
# split schedule the heuristic picks.
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { local d=$1; shift; (cd $d && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
echo "== resources (old)"
(cd old && TILEFUSE_PRINT_RESOURCES=1 LD_LIBRARY_PATH=$PWD ./tilefuse-bench cross_entropy --dtype bf16,f32 \
   --shape 16384x50304,1024x256000,262144x512 --reps 2 2>&1 | grep -E "^tilefuse: kernel")
for p in 0 1; do
  echo "== PICK_TARGET=$p (old)"
  b old cross_entropy --dtype bf16,f32 --shape 262144x512,65536x1024,32768x1000,16384x4099 --set PICK_TARGET=$p
done
for p in 5 6; do b old cross_entropy --dtype bf16 --shape 4096x128256 --set min_programs_per_sm=$p; done
H="--set SPLIT=0 --set cluster=16 --set BLOCK=4096"
for r in 1 2; do
  echo "== held, round $r: heuristic (old, new)"
  b old softmax --dtype bf16,f32 --shape 16x1048576,32x1048576,64x1048576,32x262144,128x262144
  b new softmax --dtype bf16,f32 --shape 16x1048576,32x1048576,64x1048576,32x262144,128x262144
  echo "== bf16 1M: 16 chunks per program, HELD 16 / 12 / 8"
  for h in 16 12 8; do b new softmax --dtype bf16 --shape 16x1048576,32x1048576,64x1048576 $H --set CHUNKS=16 --set num_warps=16 --set HELD=$h; done
  echo "== bf16 1M: 8 warps HELD 12 (2/SM)"
  b new softmax --dtype bf16 --shape 32x1048576 $H --set CHUNKS=16 --set num_warps=8 --set HELD=12
  echo "== f32 1M: HELD 12 / 13 of 16"
  for h in 12 13; do b new softmax --dtype f32 --shape 16x1048576,32x1048576 $H --set CHUNKS=16 --set num_warps=16 --set HELD=$h; done
  echo "== 256K: cluster 4 x 16 chunks (HELD 16/12), cluster 8 x 8 chunks (HELD 8/4), cluster 16 x 4 chunks HELD 4"
  for h in 16 12; do b new softmax --dtype bf16 --shape 32x262144,128x262144 --set SPLIT=0 --set cluster=4 --set BLOCK=4096 --set CHUNKS=16 --set num_warps=16 --set HELD=$h; done
  for h in 8 4; do b new softmax --dtype bf16 --shape 32x262144,128x262144 --set SPLIT=0 --set cluster=8 --set BLOCK=4096 --set CHUNKS=8 --set num_warps=16 --set HELD=$h; done
  b new softmax --dtype bf16 --shape 32x262144,128x262144 $H --set CHUNKS=4 --set num_warps=16 --set HELD=4
  b new softmax --dtype f32 --shape 32x262144,128x262144 --set SPLIT=0 --set cluster=8 --set BLOCK=4096 --set CHUNKS=8 --set num_warps=16 --set HELD=8
done
