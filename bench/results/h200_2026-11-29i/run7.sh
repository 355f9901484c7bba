#!/usr/bin/env bash
# Run 7: softmax's winning shape (4-warp programs of 4 x 1024 + a tail of 8) for the
# forward norms past a power of two, against their heuristic (the power of two's programs
# with a tail: 2 x (8192 + 8) at 16385), bf16, alternated, two rounds.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
nb() { timeout 60 $b/tilefuse-bench rmsnorm,add_rmsnorm,layernorm --dtype bf16 --shape $1 --reps 10 "${@:2}" 2>&1 | grep '%'; }
for round in 1 2; do
  for s in 4096x8193:2 2048x16385:4 1024x32769:8 512x65537:16; do
    echo "#### round $round ${s%:*}: heuristic"; nb ${s%:*}
    echo "#### round $round ${s%:*}: 4 x 1024 + 8 on 4 warps"
    nb ${s%:*} --set BLOCK=1024 --set CHUNKS=4 --set TAIL=8 --set num_warps=4 --set cluster=${s#*:} --set HELD=0 --set min_programs_per_sm=8
  done
done
