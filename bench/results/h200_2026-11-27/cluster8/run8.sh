#!/usr/bin/env bash
# The final code (289f193): GPU tests touched by this stop's changes (every launch went through the refactored loader), the new backward rule's config
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./tilefuse-bench layernorm_bwd_recompute,rmsnorm,layernorm --shape 4096x32768,1024x131072 | grep -E '^[a-z_]+ '
for t in test_gpu_norms_backward test_gpu_row_chunks test_autotune_gpu test_dlpack_gpu test_gpu_gallery; do s=$(date +%s); r=$(timeout 240 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)"; done
