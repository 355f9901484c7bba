#!/usr/bin/env bash
# Run 6: the final code's GPU tests of the changed heuristics (row chunks, split rows, held
# loads; memcheck of the row chunks), the forward row kernels at the standard shapes (bf16,
# f16), and the bf16 width sweep (1K-4M columns, remainders 0/1/2/4 mod 8).
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c6 && export TILEFUSE_CACHE_DIR=/tmp/c6
for t in test_gpu_row_chunks test_gpu_split_rows test_gpu_held_loads; do echo "#### $t"; timeout 120 ./$t 2>&1 | grep -E "ERROR|test cases|assertions" | head; done
t=$SECONDS; timeout 120 compute-sanitizer --tool memcheck ./test_gpu_row_chunks 2>&1 | grep -E "ERROR SUMMARY|test cases" | head; echo "memcheck took $((SECONDS-t)) s"
echo "#### standard shapes"
timeout 150 ./tilefuse-bench softmax,layernorm --dtype bf16,f16 2>&1 | grep -v "^\s*$" | cut -c1-170
echo "#### width sweep bf16"
t=$SECONDS; timeout 230 ./width_sweep.sh $out bf16; echo "sweep took $((SECONDS-t)) s"; ls -la $out
