#!/usr/bin/env bash
# The issue-4 table in one command on the GPU machine: every row kernel x dtype x shape
# with tilefuse-bench (JSON), then the peers (torch eager, torch.compile, Triton) from
# peers.py for softmax and RMSNorm on the same shapes. Run from a bundle made by
# tools/device-bundle.sh with peers.py copied next to the binaries:
#   bundle/gallery_table.sh OUTDIR [DTYPES]      (DTYPES default: bf16,f16,f32)
# Writes OUTDIR/ours.json and OUTDIR/peers_<dtype>.jsonl; bench/make_table.py turns
# them into the markdown tables of bench/NOTES.md.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: gallery_table.sh OUTDIR [DTYPES]}
dtypes=${2:-bf16,f16,f32}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$here/tilefuse-bench" softmax,rmsnorm,layernorm,add_rmsnorm --dtype "$dtypes" --json >"$out/ours.json"
shapes=(--shape 65536x1024 --shape 16384x4096 --shape 8192x16384 --shape 2048x65536 --shape 16384x5000 --shape 512x262144)
for dt in ${dtypes//,/ }; do
  pdt=$dt
  [ "$dt" = f16 ] && pdt=fp16
  [ "$dt" = f32 ] && pdt=fp32
  compile=()
  [ "$dt" != bf16 ] && compile=(--no-compile)  # torch.compile warm-up is slow: bf16 only
  for k in softmax rmsnorm; do
    python3 "$here/peers.py" "$k" --dtype "$pdt" "${shapes[@]}" "${compile[@]}" 2>/dev/null | grep '^{' >>"$out/peers_$dt.jsonl"
  done
done
