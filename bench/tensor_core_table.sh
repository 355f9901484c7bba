#!/usr/bin/env bash
# GEMM and attention, ours and the peers, in one command on the GPU machine. Run from a
# bundle made by tools/device-bundle.sh with peers.py copied next to the binaries:
#   bundle/tensor_core_table.sh OUTDIR
# Writes OUTDIR/ours.txt (tilefuse-bench, heuristic configs) and OUTDIR/peers.txt
# (peers.py summaries: cuBLAS, cuBLAS + eager epilogue, Triton, SDPA flash, cuDNN).
# Attention shapes are the peers': 16 heads and batch = 32768 / seq_len.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: tensor_core_table.sh OUTDIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
  "$here/tilefuse-bench" matmul --dtype bf16,f16 --reps 20
  "$here/tilefuse-bench" attention --dtype f16,bf16 --reps 10 \
    --shape 32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c,32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
} 2>&1 | tee "$out/ours.txt"
{
  python3 "$here/peers.py" gemm --dtype bf16 --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 8192x8192x1024 \
    --shape 16384x4096x4096 --shape 4000x4000x4000 --no-compile
  python3 "$here/peers.py" attention --dtype fp16 --d 64 --d 128 --n 1024 --n 4096 --n 16384
  python3 "$here/peers.py" attention --dtype fp16 --d 64 --d 128 --n 4096 --n 16384 --causal
} 2>/dev/null | grep -v '^{' | tee "$out/peers.txt"
