#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
for cfg in 32,128,4 32,256,4 16,256,4 32,128,2 16,128,4 32,512,4 64,256,8 16,512,4; do
  echo "== TF_TR_EXP=$cfg"
  TF_TR_EXP=$cfg ./tilefuse-bench scaled_matmul --dtype f8e4m3 --shape 4096x4096x4096,8192x8192x8192,64x4096x4096,1024x1024x1024 --set B_TRANS=0 | grep scaled | cut -c1-70
done
