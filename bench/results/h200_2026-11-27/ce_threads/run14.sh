#!/usr/bin/env bash
# One programs-per-SM rule for softmax and cross-entropy: GPU tests, cross-entropy at the
# standard and other vocabularies (bf16, f16), softmax where the rule moved, peers.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"
for t in test_gpu_cross_entropy test_gpu_gallery; do ./$t 2>&1 | tail -3; done
B="--dtype bf16 --reps 20"
./tilefuse-bench cross_entropy $B --shape 8192x32000,4096x128256,2048x151936,16384x50304,8192x50304,4096x100000,8192x28000,4096x50257,2048x128257 | grep -E '^cross'
./tilefuse-bench cross_entropy --dtype f16 --reps 20 --shape 8192x32000,4096x128256,2048x151936,16384x50304 | grep -E '^cross'
./tilefuse-bench softmax $B --shape 8192x24000,8192x45000,4096x90000,16384x50304 | grep -E '^softmax'
timeout 150 python3 peers.py cross_entropy --dtype bf16 2>&1 | grep -A20 '# summary'
