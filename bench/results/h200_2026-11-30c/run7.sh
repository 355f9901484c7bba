#!/usr/bin/env bash
# Run 7: the final code (LayerNorm's 16-bit rows: one held program of 16384 columns as
# 2 x 8192 on 16 warps; rows of one 4096 tile in pairs on 8 warps): the GPU tests of the
# row programs, memcheck of the new cases, the new heuristic against the previous configs
# (two rounds), and the forward row kernels at the standard shapes.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c7 && export TILEFUSE_CACHE_DIR=/tmp/c7
for t in test_gpu_row_chunks test_gpu_row_batches test_gpu_held_loads test_gpu_gallery; do echo "#### $t"; timeout 150 ./$t 2>&1 | grep -E "ERROR|test cases|assertions" | head; done
t=$SECONDS; timeout 120 compute-sanitizer --tool memcheck ./test_gpu_row_batches -tc="*layernorm rows program*" 2>&1 | grep -E "ERROR SUMMARY|test cases" | head
timeout 120 compute-sanitizer --tool memcheck ./test_gpu_row_chunks -tc="*wide cluster programs*" 2>&1 | grep -E "ERROR SUMMARY|test cases" | head; echo "memcheck took $((SECONDS-t)) s"
run() { local k=$1 d=$2 s=$3; shift 3; local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  printf '%-10s %-4s %-12s %-70s ' $k $d $s "$*"; timeout 60 ./tilefuse-bench $k --dtype $d --shape $s "${sets[@]}" --reps 10 2>&1 | grep -E " ok | FAIL|rror" | awk '{$1=$2=$3=""; print}' | cut -c1-200; }
OLD16="BLOCK=4096 CHUNKS=4 HELD=4 num_warps=8 min_programs_per_sm=3"
for round in 1 2; do
  echo "#### round $round: previous config / heuristic"
  for d in bf16 f16; do
    for s in 8192x16384 4096x16384 8192x14400; do run layernorm $d $s $OLD16; run layernorm $d $s; done
    for s in 16384x4096 32768x3600 4096x4096; do run layernorm $d $s ROWS=1 num_warps=4; run layernorm $d $s; done
  done
done
echo "#### standard shapes"
timeout 200 ./tilefuse-bench softmax,rmsnorm,add_rmsnorm,layernorm --dtype bf16,f16 2>&1 | grep -v "^\s*$" | cut -c1-170
