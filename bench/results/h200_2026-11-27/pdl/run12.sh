#!/usr/bin/env bash
# One-program 16-bit rows: the heuristic's warps against twice (and half) as many, per kernel and width.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
try() { local k=$1 d=$2 s=$3; shift 3; ./tilefuse-bench $k --dtype $d --reps 20 --shape $s "$@" | grep -E "^$k " | awk -v c="$*" '{print $1, $2, $3, $4, $6, "|", c}'; }
for round in 1 2; do
echo "== round $round"
for k in softmax rmsnorm layernorm add_rmsnorm; do
  try $k bf16 32768x2048
  try $k bf16 32768x2048 --set BLOCK=2048 --set num_warps=4
  try $k bf16 16384x4096
  try $k bf16 16384x4096 --set BLOCK=4096 --set num_warps=8
  try $k bf16 8192x8192
  try $k bf16 8192x8192 --set BLOCK=8192 --set num_warps=16
  try $k bf16 8192x8192 --set BLOCK=8192 --set num_warps=4
done
done
