#!/usr/bin/env bash
# Run 2: programs whose chunks stay in shared memory (HELD) where registers bound the
# rows on clusters: softmax and cross-entropy at 64K-256K columns, the heuristic's config
# with HELD = all its chunks (and other cluster shapes), new/ only (HELD=0 is the
# previous code path: the same PTX).
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$@" --reps 10 --json | j); }
S="2048x65536,1024x131072,512x262144,256x262144,128x262144,64x262144"
for r in 1 2; do
  echo "== round $r: softmax heuristic, HELD=16, HELD=16 uncapped"
  b softmax --dtype bf16,f32 --shape $S
  b softmax --dtype bf16,f32 --shape $S --set HELD=16
  b softmax --dtype bf16 --shape $S --set HELD=16 --set min_programs_per_sm=0
  echo "== softmax 8 x 8 x 4096 (HELD 8), 8 x 4 x 4096 (HELD 4)"
  b softmax --dtype bf16 --shape 512x262144,256x262144,128x262144,64x262144 --set SPLIT=0 --set cluster=8 --set BLOCK=4096 --set CHUNKS=8 --set num_warps=16 --set HELD=8 --set min_programs_per_sm=0
  b softmax --dtype bf16 --shape 2048x65536,1024x131072 --set cluster=8 --set BLOCK=4096 --set CHUNKS=4 --set num_warps=16 --set HELD=4 --set min_programs_per_sm=0
  echo "== cross-entropy heuristic, HELD=1, HELD=16"
  C="4096x128256,2048x151936,1024x256000,1024x200000"
  b cross_entropy --dtype bf16,f32 --shape $C
  b cross_entropy --dtype bf16,f32 --shape $C --set HELD=1
  b cross_entropy --dtype bf16,f32 --shape $C --set HELD=16
  b cross_entropy --dtype bf16 --shape $C --set HELD=16 --set min_programs_per_sm=0
done
