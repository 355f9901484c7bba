#!/usr/bin/env bash
# The training kernels against the peers in one command on the GPU machine: ours
# (tilefuse-bench, JSON: cross-entropy, the backward passes, SwiGLU, and the forward row
# kernels the fwd+bwd comparison needs), then peers.py (torch, torch.compile,
# Liger-Kernel) on the same shapes. Run from a bundle (tools/device-bundle.sh) with
# peers.py and wheels/ copied next to the binaries:
#   bundle/training_table.sh OUTDIR [DTYPE]        (DTYPE default: bf16)
# Writes OUTDIR/training_ours.json and OUTDIR/training_peers.jsonl;
# bench/make_training_table.py turns them into the tables of bench/NOTES.md.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: training_table.sh OUTDIR [DTYPE]}
dt=${2:-bf16}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rows="65536x1024,16384x4096,8192x16384,2048x65536,16384x5000"
ce="8192x32000,4096x128256,2048x151936,16384x50304"
{
  "$here/tilefuse-bench" cross_entropy --dtype "$dt" --shape "$ce" --json
  "$here/tilefuse-bench" softmax,rmsnorm,layernorm_stats,softmax_bwd,rmsnorm_bwd,layernorm_bwd,swiglu,swiglu_bwd \
    --dtype "$dt" --shape "$rows" --json
} >"$out/training_ours.json"
pdt=$dt
[ "$dt" = f16 ] && pdt=fp16
[ "$dt" = f32 ] && pdt=fp32
: >"$out/training_peers.jsonl"
python3 "$here/peers.py" cross_entropy --dtype "$pdt" 2>/dev/null | grep '^{' >>"$out/training_peers.jsonl"
for k in rmsnorm_bwd layernorm_bwd softmax_bwd swiglu; do
  python3 "$here/peers.py" "$k" --dtype "$pdt" 2>/dev/null | grep '^{' >>"$out/training_peers.jsonl"
done
