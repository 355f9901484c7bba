#!/usr/bin/env bash
# decode GEMMs: 16-row tiles (mma.sync path) against the wgmma split rule
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
M() { ./tilefuse-bench $1 --dtype $2 --shape $3 "${@:4}" | awk '/^(matmul|scaled)/{printf "%s=%s%s ", $3, $4, ($5=="FAIL"||$6=="FAIL"||$7=="FAIL")?"!":""}'; echo " <- ${*:4}"; }
S=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,16x4096x14336,16x14336x4096
for bt in 0 1; do
echo "== B_TRANS=$bt"
M matmul bf16 $S --set B_TRANS=$bt
for cfg in "16 64 64 4 4 4" "16 64 64 4 4 8" "16 128 64 4 4 4" "16 32 128 2 4 4" "16 64 128 4 3 4" "32 64 64 4 4 4" "16 128 128 4 3 2" "16 256 64 4 4 2"; do
  set -- $cfg
  M matmul bf16 $S --set B_TRANS=$bt --set BLOCK_M=$1 --set BLOCK_N=$2 --set BLOCK_K=$3 --set num_warps=$4 --set num_stages=$5 --set SPLIT_K=$6
done
done
./tilefuse-compile matmul --dtype bf16 --set BLOCK_M=16 --set BLOCK_N=64 --set BLOCK_K=64 --set num_warps=4 --set num_stages=4 --ptxas -o /tmp/m16.ptx 2>&1 | tail -3
grep -c "mma.sync\|wgmma" /tmp/m16.ptx; grep -m3 "mma.sync\|wgmma.mma_async" /tmp/m16.ptx
