#!/usr/bin/env bash
# width sweep (bf16 then f32) on the current code; JSON to $OUT (sweep_bf16.json, sweep_f32.json)
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
s=$(date +%s); timeout 250 ./width_sweep.sh "$1" bf16 2>&1 | tail -3; echo "bf16 took $(( $(date +%s)-s )) s"
s=$(date +%s); timeout 200 ./width_sweep.sh "$1" f32 2>&1 | tail -3; echo "f32 took $(( $(date +%s)-s )) s"
