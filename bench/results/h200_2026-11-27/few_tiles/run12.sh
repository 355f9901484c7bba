#!/usr/bin/env bash
# compute-sanitizer memcheck on the GPU tests added this stop
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
set -f
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for t in "test_gpu_float8 *splits*K*" "test_gpu_gallery *splits*K*" "test_gpu_ops *chain*dependent*"; do
  set -- $t
  echo "== memcheck $1 -tc=$2 ($CS)"
  timeout 200 $CS --tool memcheck --error-exitcode 9 ./$1 -tc="$2" 2>&1 | grep -E "ERROR SUMMARY|test cases|Invalid|FAIL" | head -6
  echo "exit ${PIPESTATUS[0]}"
done
