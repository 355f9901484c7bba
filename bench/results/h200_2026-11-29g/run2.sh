#!/usr/bin/env bash
# Run 2: attention, ours (the heuristic of fea6e26, every kernel on the whole-program JIT; d128
# warp-specialized ping-pong, d64 single role) against peers.py (SDPA flash, cuDNN,
# Triton's tutorial kernel with a config sweep) in one command, f16 then bf16, our rows
# before and after the peers'.
# Arguments: the bundle folder (with peers/ inside), the output folder.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
s128=32x16x1024x128,8x16x4096x128,2x16x16384x128,8x16x4096x128c,2x16x16384x128c
s64=32x16x1024x64,8x16x4096x64,2x16x16384x64,8x16x4096x64c,2x16x16384x64c
ours() { timeout 100 $b/tilefuse-bench attention --dtype $1 --shape $s128,$s64 --reps 10 2>&1 | grep TFLOP; }
peers() {
  (cd $b/peers && timeout 115 python3 peers.py attention --dtype $1 2>/dev/null | grep '^{'
   timeout 115 python3 peers.py attention --dtype $1 --causal 2>/dev/null | grep '^{')
}
echo "#### ours f16 (round 1)"; ours f16
echo "#### peers fp16"; peers fp16
echo "#### ours f16 (round 2)"; ours f16
echo "#### ours bf16"; ours bf16
echo "#### peers bf16"; peers bf16
echo "#### ours bf16 (round 2)"; ours bf16
