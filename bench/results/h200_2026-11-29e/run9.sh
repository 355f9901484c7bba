#!/usr/bin/env bash
# Run 9: warp specialization at d128 with the whole-program JIT (no spills; runs 7-8 found
# the linker's relocatable compile spilling 248 bytes a thread). Heuristic vs
# warp-specialized, early release, ping-pong (+ lead waits, + exp2 before the P.V wait,
# + RESCALE_LATE), f16 at the peers' shapes, two rounds; then resources and the TMA tests.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s128=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
run() {  # name, env..., -- , bench args...
  local name=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $s128 --reps 10 "$@" 2>&1 | grep -v '^\s*$' | grep -v '^kernel\|^device'
}
E=TILEFUSE_EARLY_RELEASE=1
P="TILEFUSE_PINGPONG=1 TILEFUSE_PINGPONG_LEAD_WAITS=1"
W=--set\ warp_specialize=1
for round in 1 2; do
  echo "#### round $round"
  run base X=1 --
  run ws X=1 -- $W
  run ws_early $E -- $W
  run pp $E TILEFUSE_PINGPONG=1 -- $W
  run pp_lead $E $P -- $W
  run pp_lead_branch $E $P TILEFUSE_WAIT_FENCE=branch -- $W
  run pp_lead_late $E $P -- $W --set RESCALE_LATE=1
done
echo "#### resources"
TILEFUSE_PRINT_RESOURCES=1 $b/tilefuse-bench attention --dtype f16 --shape 8x16x4096x128 --reps 2 $W 2>&1 | grep 'tilefuse: kernel'
TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG=1 TILEFUSE_PRINT_RESOURCES=1 $b/tilefuse-bench attention --dtype f16 --shape 8x16x4096x128 --reps 2 $W 2>&1 | grep 'tilefuse: kernel'
echo "#### test_gpu_tma"
timeout 150 $b/test_gpu_tma 2>&1 | tail -4
