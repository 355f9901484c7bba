#!/usr/bin/env bash
# Softmax's rule against the peers in one command (bf16), at the widths the new cap moved.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
S="16384x50304,8192x100000,4096x128256"
./tilefuse-bench softmax --dtype bf16 --reps 20 --shape $S | grep -E '^softmax'
timeout 200 python3 peers.py softmax --dtype bf16 --shape 16384x50304 --shape 8192x100000 --shape 4096x128256 2>&1 | grep -A20 '# summary'
./tilefuse-bench softmax --dtype bf16 --reps 20 --shape $S | grep -E '^softmax'
