#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
./test_gpu_float8 2>&1 | grep -v "^\[doctest\] run with" | head -60
for cfg in 128,128,4 64,64,4 64,128,4 128,128,8 64,256,4 256,64,4 32,128,4 128,64,4; do
  echo "== TF_TR_EXP=$cfg"
  TF_TR_EXP=$cfg ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 4096x4096x4096,8192x8192x8192,64x4096x4096 --set B_TRANS=0 | grep scaled
done
TF_TR_EXP=128,128,4 ncu --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats -k regex:transpose -c 1 ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 8192x8192x8192 --set B_TRANS=0 --reps 1 2>&1 | grep -v "^==PROF==" | tail -60
