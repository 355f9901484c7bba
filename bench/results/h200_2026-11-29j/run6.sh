#!/usr/bin/env bash
# Run 6: persistent programs taking their rounds in alternating directions (new) against
# plain striding (old/, run 5's build): d128 attention persistent, causal N1024 / N2048 /
# N4096 and non-causal N4096 (control), with ping-pong turns and without; the
# one-program-per-block heuristic for reference; then the whole GPU suite on the new build.
b=${1:?bundle}; out=${2:?out}
s=32x16x1024x128c,16x16x2048x128c,8x16x4096x128c,8x16x4096x128
mkdir -p /tmp/o1 /tmp/o2 /tmp/n1 /tmp/n2
bench() { local dir=$1; shift; (cd $dir && LD_LIBRARY_PATH=$PWD timeout 200 ./tilefuse-bench attention --dtype bf16 --shape $s "$@" --reps 10 2>&1 | grep TFLOP); }
for round in 1 2; do
  echo "#### round $round: old persistent"; TILEFUSE_CACHE_DIR=/tmp/o1 bench $b/../old --set persistent=1
  echo "#### round $round: new persistent"; TILEFUSE_CACHE_DIR=/tmp/n1 bench $b --set persistent=1
  echo "#### round $round: old persistent, TILEFUSE_PINGPONG=0"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/o2 bench $b/../old --set persistent=1
  echo "#### round $round: new persistent, TILEFUSE_PINGPONG=0"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/n2 bench $b --set persistent=1
done
echo "#### new heuristic (one program per block)"; TILEFUSE_CACHE_DIR=/tmp/n1 bench $b
echo "#### suite"
(cd $b && TILEFUSE_CACHE_DIR=$(mktemp -d) TEST_JOBS=4 timeout 300 ./run-gpu-tests.sh 2>&1 | tail -26)
