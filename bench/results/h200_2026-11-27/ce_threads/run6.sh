#!/usr/bin/env bash
# Cross-entropy row configs at 1024 threads per SM (64 registers) against the rule, per shape.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
r() { local shape=$1 label=$2; shift 2; local sets=(); for s in "$@"; do sets+=(--set "$s"); done
  ./tilefuse-bench cross_entropy $B --shape $shape "${sets[@]}" | grep -E '^cross' | awk -v l="$label" '{print $3, $4, $6, $7, $8, l}'; }
rule() { ./tilefuse-bench cross_entropy $B --shape $1 | grep -E '^cross' | awk '{print $3, $4, $6, $7, $8, "rule", $9, $10, $11, $12, $13, $14}'; }
for round in 1 2; do
echo "== round $round"
for s in 8192x32000 8192x32768 4096x30000; do rule $s
  r $s "c8x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=8 num_warps=4 min_programs_per_sm=8
  r $s "c4x8192 w8 p4" BLOCK=8192 CHUNKS=1 cluster=4 num_warps=8 min_programs_per_sm=4
  r $s "c4x8192 w8 p4 pick" BLOCK=8192 CHUNKS=1 cluster=4 num_warps=8 min_programs_per_sm=4 PICK_TARGET=1
done
for s in 4096x128256 2048x128257; do rule $s
  r $s "c16x8192 w8 p4" BLOCK=8192 CHUNKS=1 cluster=16 num_warps=8 min_programs_per_sm=4 PICK_TARGET=0
  r $s "c16x8192 w8 p4 pick" BLOCK=8192 CHUNKS=1 cluster=16 num_warps=8 min_programs_per_sm=4 PICK_TARGET=1
done
s=2048x151936; rule $s
  r $s "c16 5x2048 w8 p3" BLOCK=2048 CHUNKS=5 cluster=16 num_warps=8 min_programs_per_sm=3
  r $s "c16 5x2048 w16 p2" BLOCK=2048 CHUNKS=5 cluster=16 num_warps=16 min_programs_per_sm=2
for s in 16384x50304 4096x50257 8192x100000 8192x28000; do rule $s
  r $s "7x1024 w8 p4" BLOCK=1024 CHUNKS=7 num_warps=8 min_programs_per_sm=4 PICK_TARGET=0
  r $s "7x1024 w8 p4 pick" BLOCK=1024 CHUNKS=7 num_warps=8 min_programs_per_sm=4 PICK_TARGET=1
  r $s "7x1024 w4 p6 nopick" BLOCK=1024 CHUNKS=7 num_warps=4 min_programs_per_sm=6 PICK_TARGET=0
done
s=16384x50304; r $s "c16x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=16 num_warps=4 min_programs_per_sm=8
s=1024x256000; rule $s
  r $s "c16x16384 w16 p2" BLOCK=16384 CHUNKS=1 cluster=16 num_warps=16 min_programs_per_sm=2 PICK_TARGET=0
  r $s "c16x16384 w16 p2 pick" BLOCK=16384 CHUNKS=1 cluster=16 num_warps=16 min_programs_per_sm=2 PICK_TARGET=1
s=4096x65536; rule $s
  r $s "c16x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=16 num_warps=4 min_programs_per_sm=8
  r $s "c8x8192 w8 p4" BLOCK=8192 CHUNKS=1 cluster=8 num_warps=8 min_programs_per_sm=4
s=16384x24000; rule $s
  r $s "c4 3x2048 w8 p4" BLOCK=2048 CHUNKS=3 cluster=4 num_warps=8 min_programs_per_sm=4
  r $s "c4 3x2048 w4 p8" BLOCK=2048 CHUNKS=3 cluster=4 num_warps=4 min_programs_per_sm=8
done
echo "== softmax reference at the same shapes"
./tilefuse-bench softmax $B --shape 8192x32000,4096x128256,16384x50304,2048x151936 | grep -E '^softmax'
