#!/usr/bin/env bash
# Cross-entropy: programs per SM up to 1024 threads (4 warps: 8; 8 warps: 4) against the rule's
# cap of 6, at 32/48/56/64 values per thread; the pick at 8 warps; softmax at the same configs.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
B="--dtype bf16 --reps 20"
r() { local k=$1 shape=$2 label=$3; shift 3; local sets=() a; for a in "$@"; do sets+=(--set "$a"); done
  ./tilefuse-bench $k $B --shape $shape "${sets[@]}" | grep -E "^$k" | awk -v l="$label" '{print $3, $4, $6, $7, l}'; }
rule() { ./tilefuse-bench $1 $B --shape $2 | grep -E "^$1" | awk '{print $3, $4, $6, $7, "rule", $8, $9, $10, $11, $12, $13, $14}'; }
for round in 1 2; do
echo "== round $round"
for s in 8192x32000 4096x30000 4096x65536; do rule cross_entropy $s
  r cross_entropy $s "x4096 w4 p7" BLOCK=4096 CHUNKS=1 num_warps=4 min_programs_per_sm=7
  r cross_entropy $s "x4096 w4 p8" BLOCK=4096 CHUNKS=1 num_warps=4 min_programs_per_sm=8
  r cross_entropy $s "x4096 w4 p8 pick" BLOCK=4096 CHUNKS=1 num_warps=4 min_programs_per_sm=8 PICK_TARGET=1
done
for s in 16384x50304 4096x50257 8192x100000 8192x28000; do rule cross_entropy $s
  r cross_entropy $s "7x1024 w4 p7" BLOCK=1024 CHUNKS=7 num_warps=4 min_programs_per_sm=7
  r cross_entropy $s "7x1024 w4 p8" BLOCK=1024 CHUNKS=7 num_warps=4 min_programs_per_sm=8
done
s=16384x24000; rule cross_entropy $s
  r cross_entropy $s "3x2048 w4 p7" BLOCK=2048 CHUNKS=3 num_warps=4 min_programs_per_sm=7
  r cross_entropy $s "3x2048 w4 p8" BLOCK=2048 CHUNKS=3 num_warps=4 min_programs_per_sm=8
for s in 4096x128256 2048x128257; do rule cross_entropy $s
  r cross_entropy $s "x8192 w4 p7" BLOCK=8192 CHUNKS=1 num_warps=4 min_programs_per_sm=7
  r cross_entropy $s "x8192 w4 p5" BLOCK=8192 CHUNKS=1 num_warps=4 min_programs_per_sm=5
  r cross_entropy $s "x8192 w8 p4 pick" BLOCK=8192 CHUNKS=1 num_warps=8 min_programs_per_sm=4 PICK_TARGET=1
  r cross_entropy $s "x8192 w8 p4 load" BLOCK=8192 CHUNKS=1 num_warps=8 min_programs_per_sm=4 PICK_TARGET=0
done
s=2048x151936; rule cross_entropy $s
  r cross_entropy $s "5x2048 w8 p5" BLOCK=2048 CHUNKS=5 num_warps=8 min_programs_per_sm=5
s=1024x256000; rule cross_entropy $s
  r cross_entropy $s "x16384 w8 p4" BLOCK=16384 CHUNKS=1 num_warps=8 min_programs_per_sm=4
echo "== softmax"
for s in 16384x50304 8192x100000 8192x28000; do rule softmax $s
  r softmax $s "7x1024 w4 p7" BLOCK=1024 CHUNKS=7 num_warps=4 min_programs_per_sm=7
  r softmax $s "7x1024 w4 p8" BLOCK=1024 CHUNKS=7 num_warps=4 min_programs_per_sm=8
done
s=8192x32000; rule softmax $s; r softmax $s "c8x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=8 num_warps=4 min_programs_per_sm=8
s=4096x65536; rule softmax $s; r softmax $s "c16x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=16 num_warps=4 min_programs_per_sm=8
done
echo "== f16"
B="--dtype f16 --reps 20"
for s in 8192x32000 16384x50304; do rule cross_entropy $s
  r cross_entropy $s "c8x4096 w4 p8" BLOCK=4096 CHUNKS=1 cluster=8 num_warps=4 min_programs_per_sm=8
  r cross_entropy $s "c8 7x1024 w4 p7" BLOCK=1024 CHUNKS=7 cluster=8 num_warps=4 min_programs_per_sm=7
done
