#!/usr/bin/env bash
# Final code: the new GPU case, the row kernels at the standard shapes (bf16, f16), the wide
# rows that moved, cross-entropy's standard shapes, peers for softmax and RMSNorm.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_row_chunks 2>&1 | tail -2
S=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000,512x262144
for d in bf16 f16; do for k in softmax rmsnorm layernorm add_rmsnorm; do ./tilefuse-bench $k --dtype $d --reps 20 --shape $S | grep -E "^$k "; done; done
echo "== other widths (bf16)"
./tilefuse-bench layernorm --dtype bf16 --reps 20 --shape 4096x32768,1024x131072,8192x8192,4096x100000 | grep -E "^layernorm "
./tilefuse-bench softmax,rmsnorm,add_rmsnorm --dtype bf16 --reps 20 --shape 256x524288,1024x262144,512x200000 | grep -E "^(softmax|rmsnorm|add_rmsnorm) "
./tilefuse-bench cross_entropy --dtype bf16 --reps 20 --shape 8192x32000,4096x128256,2048x151936,16384x50304,1024x256000 | grep -E "^cross"
echo "== peers"
for k in softmax rmsnorm; do timeout 240 python3 peers.py $k --dtype bf16 --shape 65536x1024 --shape 16384x4096 --shape 8192x16384 --shape 2048x65536 --shape 16384x5000 --shape 512x262144 2>&1 | grep '^{'; done
