#!/usr/bin/env bash
# Run 5: softmax at widths a little past a power of two. The heuristic's cluster programs
# hold 5 chunks of 1024 on 4 warps (20480 positions per 16385 columns); variants: one
# chunk fewer and a tail of 8 on the same programs (V1: 4 x (4 x 1024 + 8) at 16385), and
# half the programs with 2 x 4096 + 8 on 4 warps (V2). bf16 two rounds, f16 and f32 once.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
all=8192x4097,4096x8193,2048x16385,2048x16388,1024x32769,512x65537,512x65540
sm() { timeout 100 $b/tilefuse-bench softmax --dtype $1 --shape $2 --reps 10 "${@:3}" 2>&1 | grep '%'; }
v2() {  # half the cluster, 2 x 4096 + 8 on 4 warps
  sm $1 4096x8193 --set BLOCK=4096 --set CHUNKS=2 --set TAIL=8 --set cluster=1 --set min_programs_per_sm=2
  for s in 2048x16385:2 2048x16388:2 1024x32769:4 512x65537:8 512x65540:8; do
    sm $1 ${s%:*} --set BLOCK=4096 --set CHUNKS=2 --set TAIL=8 --set cluster=${s#*:} --set min_programs_per_sm=2
  done
}
for round in 1 2; do
  echo "#### bf16 round $round: heuristic"; sm bf16 $all
  echo "#### bf16 round $round: V1 CHUNKS=4 TAIL=8"; sm bf16 $all --set CHUNKS=4 --set TAIL=8
  echo "#### bf16 round $round: V2 half the programs, 2 x 4096 + 8"; v2 bf16
done
for dt in f16 f32; do
  echo "#### $dt: heuristic"; sm $dt $all
  echo "#### $dt: V1 CHUNKS=4 TAIL=8"; sm $dt $all --set CHUNKS=4 --set TAIL=8
  echo "#### $dt: V2"; v2 $dt
done
