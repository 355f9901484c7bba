#!/usr/bin/env bash
# Run 5: is warp specialization slow because its ring is too short? d128 cannot take a
# third stage under warp specialization (the ring lives through both loops, so the last
# block's V copy cannot share its bytes: 264192 bytes), so the ring depth is varied where
# it fits: 128x128 tiles at head dim 64, and 128x64 tiles at head dim 128, 2-4 stages,
# single role against warp-specialized (+ early release), f16, two shapes.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
run() {  # name, shapes, env..., -- , bench args...
  local name=$1 shapes=$2; shift 2; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $shapes --reps 10 "$@" 2>&1 | grep -v '^\s*$' | grep -v '^kernel\|^device'
}
for d in 64 128; do
  shapes=8x16x4096x$d,2x16x16384x$d
  bn=$([ $d = 64 ] && echo 128 || echo 64)
  cfg="--set BLOCK_M=128 --set BLOCK_N=$bn --set PV_LAG=1 --set TMA_STORE=0 --set num_warps=8"
  for st in 2 3 4; do
    run d${d}_single_st$st $shapes X=1 -- $cfg --set num_stages=$st
    run d${d}_ws_st$st $shapes X=1 -- $cfg --set num_stages=$st --set warp_specialize=1
    run d${d}_ws_early_st$st $shapes TILEFUSE_EARLY_RELEASE=1 -- $cfg --set num_stages=$st --set warp_specialize=1
  done
done
