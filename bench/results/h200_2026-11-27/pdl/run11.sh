#!/usr/bin/env bash
# Softmax / RMSNorm below 90% at standard shapes: 512x262144 chunks of 4096, 16384x4096 and 2048x65536 spreads.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
try() { local k=$1 d=$2 s=$3; shift 3; ./tilefuse-bench $k --dtype $d --reps 20 --shape $s "$@" | grep -E "^$k " | awk -v c="$*" '{print $1, $2, $3, $4, $6, "|", c}'; }
for round in 1 2; do
echo "== round $round"
for k in softmax rmsnorm; do
  s=512x262144
  try $k bf16 $s
  try $k bf16 $s --set BLOCK=4096 --set CHUNKS=4 --set num_warps=8 --set cluster=16 --set min_programs_per_sm=3
  try $k bf16 $s --set BLOCK=4096 --set CHUNKS=4 --set num_warps=4 --set cluster=16 --set min_programs_per_sm=5
  s=16384x4096
  try $k bf16 $s
  try $k bf16 $s --set BLOCK=2048 --set CHUNKS=2 --set num_warps=4
  try $k bf16 $s --set BLOCK=1024 --set CHUNKS=4 --set num_warps=4
  try $k bf16 $s --set BLOCK=4096 --set num_warps=4 --set min_programs_per_sm=8
  try $k bf16 $s --set BLOCK=4096 --set num_warps=8
  try $k bf16 $s --set BLOCK=4096 --set num_warps=2
  s=2048x65536
  try $k bf16 $s
  try $k bf16 $s --set BLOCK=4096 --set CHUNKS=1 --set num_warps=4 --set cluster=16 --set min_programs_per_sm=8
  try $k bf16 $s --set BLOCK=8192 --set CHUNKS=1 --set num_warps=8 --set cluster=8 --set min_programs_per_sm=4
done
done
