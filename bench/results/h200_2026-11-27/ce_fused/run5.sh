#!/usr/bin/env bash
# PICK_TARGET on the final code: the cross-entropy GPU tests (and memcheck of the new
# case), the attention/GEMM copy tests of the previous commit, the bench with the rule
# against PICK_TARGET=0 at the standard and other vocabularies, and the peers.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
./test_gpu_cross_entropy 2>&1 | tail -3
./test_gpu_tma -tc='*off 16-byte*,*copies operands*,*grouped*' 2>&1 | tail -3
./test_gpu_gallery 2>&1 | tail -3
compute-sanitizer --tool memcheck ./test_gpu_cross_entropy -tc='*PICK_TARGET*' 2>&1 | tail -4
B="--dtype bf16 --reps 20"
S="8192x32000,4096x128256,2048x151936,16384x50304,4096x50257,2048x128257,1024x256000,4096x65536,8192x100000"
for round in 1 2; do
  echo "== rule (round $round)"; ./tilefuse-bench cross_entropy $B --shape $S | grep -E '^cross'
  echo "== PICK_TARGET=0"; ./tilefuse-bench cross_entropy $B --shape $S --set PICK_TARGET=0 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7}'
  echo "== PICK_TARGET=1"; ./tilefuse-bench cross_entropy $B --shape $S --set PICK_TARGET=1 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7}'
done
echo "== f16 rule"; ./tilefuse-bench cross_entropy --dtype f16 --reps 20 --shape 8192x32000,4096x128256,2048x151936,16384x50304 | grep -E '^cross'
python3 peers.py cross_entropy --dtype bf16 2>&1 | grep -A20 '# summary'
echo "== spreads: the rule vs 4 programs of 8192 columns on 8 warps (4 per SM)"
S2="8192x32000,8192x32768,16384x24000,8192x28000,4096x30000"
for round in 1 2; do
./tilefuse-bench cross_entropy $B --shape $S2 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7, $9, $10, $11, $12, $13, $14}'
./tilefuse-bench cross_entropy $B --shape $S2 --set BLOCK=8192 --set cluster=4 --set num_warps=8 --set min_programs_per_sm=4 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7, "c4 x 8192, 8 warps, p4"}'
./tilefuse-bench cross_entropy $B --shape $S2 --set BLOCK=8192 --set cluster=4 --set num_warps=4 --set min_programs_per_sm=4 | grep -E '^cross' | awk '{print $1, $3, $4, $6, $7, "c4 x 8192, 4 warps, p4"}'
done
