#!/usr/bin/env bash
# Run 6: warp specialization at 128x128 tiles, head dim 128, with 240 registers for the
# consumers (producer 24: 24 x 128 + 240 x 256 = the 64512 the launch reserves) against
# 232 (producer 40). Single role needs 239 (run 5: at 128x64 tiles, 189 registers,
# warp specialization beat single role by 7%, early release by 5% more). f16.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s128=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
run() {  # name, env..., -- , bench args...
  local name=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 120 $b/tilefuse-bench attention --dtype f16 --shape $s128 --reps 10 "$@" 2>&1 | grep -v '^\s*$' | grep -v '^kernel\|^device'
}
R240="TILEFUSE_PRODUCER_REGS=24 TILEFUSE_CONSUMER_REGS=240"
E=TILEFUSE_EARLY_RELEASE=1
P="TILEFUSE_PINGPONG=1 TILEFUSE_PINGPONG_LEAD_WAITS=1"
for round in 1 2; do
  echo "#### round $round"
  run base X=1 --
  run ws_early_232 $E -- --set warp_specialize=1
  run ws_early_240 $E $R240 -- --set warp_specialize=1
  run ws_240 $R240 -- --set warp_specialize=1
  run pp_early_240 $E $R240 $P -- --set warp_specialize=1
  run pp_early_240_branch $E $R240 $P TILEFUSE_WAIT_FENCE=branch -- --set warp_specialize=1
done
echo "#### test_gpu_tma, 240 registers, early release, lead waits"
TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG_LEAD_WAITS=1 TILEFUSE_PRODUCER_REGS=24 TILEFUSE_CONSUMER_REGS=240 timeout 120 $b/test_gpu_tma 2>&1 | tail -3
