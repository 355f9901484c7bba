#!/usr/bin/env bash
# Run 7: ncu warp-state and scheduler statistics (hardware counters, no SASS patching) of
# the d128 128x128 kernel at N4096, single role against warp-specialized (+ early release)
# and ping-pong; one launch each after warm-up.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
prof() {  # name, env..., -- , bench args...
  local name=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 150 ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section SpeedOfLight -k regex:attention --launch-skip 3 --launch-count 1 \
    $b/tilefuse-bench attention --dtype f16 --shape 8x16x4096x128 --reps 3 "$@" 2>&1 | grep -v '^==PROF==' | sed -n '/Section:/,$p'
}
prof base X=1 --
prof ws TILEFUSE_EARLY_RELEASE=1 -- --set warp_specialize=1
prof pp TILEFUSE_EARLY_RELEASE=1 TILEFUSE_PINGPONG=1 TILEFUSE_PINGPONG_LEAD_WAITS=1 -- --set warp_specialize=1
