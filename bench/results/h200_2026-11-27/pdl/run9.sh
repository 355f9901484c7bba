#!/usr/bin/env bash
# LayerNorm on clusters, 16-bit: 8 warps x one 8192 tile against 4 warps x 2 chunks of 4096 per program
# (and 16384-column programs as 2 x 8192 with 3 per SM), across widths; RMSNorm and softmax at the same spread.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
try() { local k=$1 d=$2 s=$3; shift 3; ./tilefuse-bench $k --dtype $d --reps 20 --shape $s "$@" | grep -E "^$k " | awk -v c="$*" '{print $1, $2, $3, $4, $6, "|", c}'; }
for d in bf16 f16; do
  echo "== $d"
  for sc in 8192x16384:2 4096x32768:4 2048x65536:8 1024x131072:16; do
    s=${sc%:*}; cl=${sc#*:}
    try layernorm $d $s
    try layernorm $d $s --set BLOCK=4096 --set CHUNKS=2 --set num_warps=4 --set cluster=$cl
  done
  try layernorm $d 8192x16384 --set min_programs_per_sm=4
  s=512x262144
  try layernorm $d $s
  for p in 2 3; do try layernorm $d $s --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set cluster=16 --set RELOAD=1 --set min_programs_per_sm=$p; done
  try layernorm $d $s --set BLOCK=4096 --set CHUNKS=4 --set num_warps=8 --set cluster=16 --set RELOAD=1 --set min_programs_per_sm=3
done
echo "== RMSNorm, softmax (bf16)"
for k in rmsnorm softmax; do for sc in 2048x65536:8 1024x131072:16; do
  s=${sc%:*}; cl=${sc#*:}
  try $k bf16 $s
  try $k bf16 $s --set BLOCK=4096 --set CHUNKS=2 --set num_warps=4 --set cluster=$cl
done; try $k bf16 512x262144; try $k bf16 512x262144 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set cluster=16 --set min_programs_per_sm=3; done
try rmsnorm bf16 512x262144 --set BLOCK=8192 --set CHUNKS=2 --set num_warps=8 --set cluster=16 --set RELOAD=1 --set min_programs_per_sm=3
