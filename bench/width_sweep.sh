#!/usr/bin/env bash
# Row kernels across widths and alignment remainders in one command on the GPU machine:
# widths from 1K to 4M columns, each at remainders 0, 1, 2, 4 mod 8 (16-bit rows start
# misaligned unless the width is a multiple of 8), rows chosen so every shape holds
# about 32M elements (at least 16M). Run from a bundle (tools/device-bundle.sh):
#   bundle/width_sweep.sh OUTDIR [DTYPE] [KERNELS]
# Writes OUTDIR/sweep_<dtype>.json; bench/plot_sweep.py draws it as an SVG.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: width_sweep.sh OUTDIR [DTYPE] [KERNELS]}
dt=${2:-bf16}
kernels=${3:-softmax,rmsnorm,add_rmsnorm,layernorm}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
shapes=()
for base in 1024 4096 16384 65536 262144 1048576 4194304; do
  for rem in 0 1 2 4; do
    cols=$((base + rem))
    rows=$(( (32 * 1024 * 1024 + cols - 1) / cols ))
    shapes+=("${rows}x${cols}")
  done
done
list=$(IFS=,; echo "${shapes[*]}")
"$here/tilefuse-bench" "$kernels" --dtype "$dt" --shape "$list" --reps 10 --json >"$out/sweep_$dt.json"
