#!/usr/bin/env bash
# Run 11: run 10 put the persistent kernel's extra cycles on barrier stalls (0.37 -> 1.04
# per issued instruction): named barriers, i.e. the ping-pong turns or the consumers'
# barrier. One program per block against persistent, with ping-pong turns (default) and
# without (TILEFUSE_PINGPONG=0), bf16 d128 N1024 and N4096, once.
b=${1:?bundle}; out=${2:?out}
export LD_LIBRARY_PATH=$b
att() { TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 40 $b/tilefuse-bench attention --dtype bf16 --shape 32x16x1024x128,8x16x4096x128 --reps 10 "$@" 2>&1 | grep TFLOP; }
echo "#### turns"; att
echo "#### turns, persistent"; att --set persistent=1
echo "#### no turns"; TILEFUSE_PINGPONG=0 att
echo "#### no turns, persistent"; TILEFUSE_PINGPONG=0 att --set persistent=1
