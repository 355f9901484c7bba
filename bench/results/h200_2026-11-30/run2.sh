#!/usr/bin/env bash
# Run 2: where the row and training kernels stand today (bf16): the training table with
# its peers (training_table.sh), the forward row kernels at the standard shapes (bf16,
# f32); then d128 attention without ping-pong turns (TILEFUSE_PINGPONG=0): one program per
# block, persistent with Q by the consumers, persistent with Q by the producer.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD
mkdir -p /tmp/cc && export TILEFUSE_CACHE_DIR=/tmp/cc
echo "#### forward row kernels, standard shapes"
timeout 200 ./tilefuse-bench softmax,rmsnorm,layernorm,add_rmsnorm --dtype bf16,f32 2>&1 | grep -v "^\s*$" | cut -c1-170
echo "#### training table"
timeout 300 ./training_table.sh $out/training bf16 2>&1 | tail -3
s=32x16x1024x128c,8x16x4096x128c,8x16x4096x128
bench() { timeout 100 ./tilefuse-bench attention --dtype bf16 --shape $s "$@" --reps 10 2>&1 | grep TFLOP | cut -c1-60; }
mkdir -p /tmp/p1 /tmp/p2 /tmp/p3
for round in 1 2; do
  echo "#### round $round: PINGPONG=0 one program per block"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/p1 bench
  echo "#### round $round: PINGPONG=0 persistent, Q by the consumers"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/p2 bench --set persistent=1
  echo "#### round $round: PINGPONG=0 persistent, Q by the producer"; TILEFUSE_PINGPONG=0 TILEFUSE_CACHE_DIR=/tmp/p3 bench --set persistent=1 --set Q_VIEW=1
done
