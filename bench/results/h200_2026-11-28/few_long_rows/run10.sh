#!/usr/bin/env bash
# whole GPU suite from the bundle of the final commit (carried as a tar.xz: the bundle is 57 MB)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s); timeout 420 ./run-gpu-tests.sh 2>&1 | tail -80; echo "suite took $(( $(date +%s)-s )) s"
# second command: ./test_nvptx_gpu; compute-sanitizer --tool memcheck --print-limit 20 ./test_nvptx_gpu -tc='*row programs*'
