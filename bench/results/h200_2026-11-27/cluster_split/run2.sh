#!/usr/bin/env bash
# the GEMM tuner with split-K / 16-row / 6-stage configs in its space, on skinny shapes (each trial
# listed; the heuristic's config is one of them); then ncu: the split's two kernels at 64x4096x4096
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD; export TILEFUSE_CACHE_DIR=$PWD/cache
nvidia-smi --query-gpu=name --format=csv,noheader
./test_autotune_gpu 2>&1 | grep -E "ERROR|FAILED|Status|test cases" | head
./tilefuse-tune matmul --dtype bf16 --always --ms 10 --no-progress --shape 1x4096x4096 --shape 16x4096x14336 --shape 64x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 --shape 512x4096x4096 --json tune_bf16.json 2>&1 | tail -60
./tilefuse-tune scaled_matmul --dtype f8e4m3 --always --ms 10 --no-progress --shape 16x4096x4096 --shape 64x4096x4096 --json tune_fp8.json 2>&1 | tail -30
python3 - <<'PY'
import json
for f in ["tune_bf16.json", "tune_fp8.json"]:
    try: d = json.load(open(f))
    except Exception as e: print(f, e); continue
    print(json.dumps(d)[:3000])
PY
ncu --clock-control none --metrics gpu__time_duration.sum ./tilefuse-bench matmul --dtype bf16 --shape 64x4096x4096 --reps 3 2>&1 | grep -E "matmul|gpu__time" | head -20
