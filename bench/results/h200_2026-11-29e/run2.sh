#!/usr/bin/env bash
# Run 2: the MMA wait placed after the softmax's exp2 in SASS. ptxas put the P.V wait
# (WARPGROUP.DEPBAR.LE gsb0, 0) before the MUFU.EX2 stream (it pairs each exp2 with the
# pack of P, which must wait for the P.V that reads the old P), so the exp2 never ran
# beside P.V. `TILEFUSE_WAIT_FENCE=membar` (membar.cta before each MMA wait) keeps all 66
# exp2 before the wait (local ptxas + cuobjdump). d128 and d64, f16, peers' shapes.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s128=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
s64=32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
run() {  # name, shapes, env..., -- , bench args...
  local name=$1 shapes=$2; shift 2; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $shapes --reps 10 "$@" 2>&1 | grep -v '^\s*$' | grep -v '^kernel\|^device'
}
M=TILEFUSE_WAIT_FENCE=membar
for round in 1 2; do
  echo "#### round $round"
  run base $s128 X=1 --
  run membar $s128 $M --
  run membar_nofence $s128 $M TILEFUSE_TMA_FENCE=0 --
  run membar_late $s128 $M -- --set RESCALE_LATE=1
  run membar_ws $s128 $M TILEFUSE_EARLY_RELEASE=1 -- --set warp_specialize=1
  run membar_pp $s128 $M TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG=1 TILEFUSE_PINGPONG_LEAD_WAITS=1 -- --set warp_specialize=1
  run d64_base $s64 X=1 --
  run d64_membar $s64 $M --
done
echo "#### test_gpu_tma with membar waits"
TILEFUSE_WAIT_FENCE=membar timeout 120 $b/test_gpu_tma 2>&1 | tail -3
