#!/usr/bin/env bash
# The refactored host-function attention tests, and the PyTorch attention tests (new head
# dims, grouped key/value heads) through the Python package built here.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
./test_gpu_tma -tc="*off 16-byte*,*grouped*" 2>&1 | tail -3
cd .. && timeout 400 bash bundle/run-python-gpu-tests.sh -k attention 2>&1 | tail -15
