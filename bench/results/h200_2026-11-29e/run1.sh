#!/usr/bin/env bash
# Run 1: attention d128 f16 at the peers' shapes, the heuristic against FlashAttention-3's
# main-loop pieces, each a knob or meta-parameter of the same build, two rounds:
#   late      RESCALE_LATE=1 (O rescaled after the softmax; MMAs issue first)
#   nofence   TILEFUSE_TMA_FENCE=0 (no proxy fence before MMAs on TMA operands)
#   ws        warp_specialize=1 + TILEFUSE_EARLY_RELEASE=1 (stages released at the MMA wait)
#   pp        ws + TILEFUSE_PINGPONG=1 + TILEFUSE_PINGPONG_LEAD_WAITS=1
#   pp_late   pp + RESCALE_LATE=1;  pp_late_nf: + TILEFUSE_TMA_FENCE=0
# then the TMA GPU test (ping-pong cases) with the new knobs on.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
shapes=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
run() {  # name, env..., -- , bench args...
  local name=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $shapes --reps 10 "$@" 2>&1 | grep -v '^\s*$' | grep -v '^kernel\|^device'
}
WS="TILEFUSE_EARLY_RELEASE=1"
PP="TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG=1 TILEFUSE_PINGPONG_LEAD_WAITS=1"
for round in 1 2; do
  echo "#### round $round"
  run base X=1 --
  run late X=1 -- --set RESCALE_LATE=1
  run nofence TILEFUSE_TMA_FENCE=0 --
  run ws $WS -- --set warp_specialize=1
  run pp $PP -- --set warp_specialize=1
  run pp_late $PP -- --set warp_specialize=1 --set RESCALE_LATE=1
  run pp_late_nf $PP TILEFUSE_TMA_FENCE=0 -- --set warp_specialize=1 --set RESCALE_LATE=1
done
echo "#### test_gpu_tma with the ping-pong knobs"
TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG_LEAD_WAITS=1 timeout 120 $b/test_gpu_tma 2>&1 | tail -4
