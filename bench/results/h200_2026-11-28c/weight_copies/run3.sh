#!/usr/bin/env bash
# Final check of the weight copies: the bf16 width sweep of the norms, new and previous (old/)
# in one command; GPU tests; memcheck of the new GPU case. $1: output folder.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
out=${1:?}
s=$(date +%s); ./width_sweep.sh "$out/new" bf16 rmsnorm,add_rmsnorm,layernorm; echo "new sweep took $(( $(date +%s)-s )) s"
cp width_sweep.sh old/; s=$(date +%s); (cd old && LD_LIBRARY_PATH=$PWD ./width_sweep.sh "$out/old" bf16 rmsnorm,add_rmsnorm,layernorm); echo "old sweep took $(( $(date +%s)-s )) s"
for t in test_gpu_aligned_rows test_gpu_row_chunks test_gpu_split_rows test_gpu_norms_backward test_gpu_gallery; do
  echo "== test $t"; ./$t 2>&1 | tail -n 4
done
echo "== memcheck"; compute-sanitizer --tool memcheck ./test_gpu_aligned_rows -tc='*shifted copies*' 2>&1 | tail -n 6
