#!/usr/bin/env bash
# Row kernels at the standard shapes: PDL default / off / entry (regression hunt: softmax 65536x1024 91.6 -> 76.9).
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000,512x262144
for pdl in default 0 entry; do
  echo "== PDL $pdl"
  for k in softmax rmsnorm layernorm add_rmsnorm; do
    if [ $pdl = default ]; then ./tilefuse-bench $k --dtype bf16 --reps 20 --shape $S | grep -E "^$k "
    else TILEFUSE_PDL=$pdl ./tilefuse-bench $k --dtype bf16 --reps 20 --shape $S | grep -E "^$k "; fi
  done
done
echo "== f16/f32 default"
for d in f16 f32; do for k in softmax rmsnorm layernorm add_rmsnorm; do ./tilefuse-bench $k --dtype $d --reps 20 --shape $S | grep -E "^$k "; done; done
