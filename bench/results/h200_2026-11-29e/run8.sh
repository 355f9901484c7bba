#!/usr/bin/env bash
# Run 8: where the warp-specialized d128 kernel's doubled L2 traffic (run 7) and its
# stalls come from: L2 bytes by operation, TMA and shared-memory traffic, stall reasons.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
m=lts__t_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg
m=$m,dram__bytes_read.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_l2.sum
for r in barrier long_scoreboard wait membar math_pipe_throttle short_scoreboard sleeping dispatch_stall misc mio_throttle lg_throttle no_instruction branch_resolving selected not_selected tex_throttle drain imc_miss; do
  m=$m,smsp__average_warp_latency_issue_stalled_$r.ratio
done
prof() {
  local name=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" timeout 150 ncu --metrics $m -k regex:attention --launch-skip 3 --launch-count 1 \
    $b/tilefuse-bench attention --dtype f16 --shape 8x16x4096x128 --reps 3 "$@" 2>&1 | grep -E '^\s+(lts|l1tex|smsp|sm__|dram)'
}
prof base X=1 --
prof ws TILEFUSE_EARLY_RELEASE=1 -- --set warp_specialize=1
