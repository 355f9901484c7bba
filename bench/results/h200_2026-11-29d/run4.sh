#!/usr/bin/env bash
# Run 4: half_cluster_programs (LayerNorm and the residual RMSNorm, 16-bit rows whose
# cluster programs would hold chunks of 1024) -- the previous bench (old) against the new
# one (new), same library, alternated per shape, two rounds bf16 and one f16; the widths of
# run 3 and widths it did not measure (aligned 20000 / 50304, 4-byte 100002, odd 20001 / 40001).
b=${1:?old bundle}; n=${2:?dir with the new tilefuse-bench}
export LD_LIBRARY_PATH=$b TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
run() { local tag=$1 bin=$2; shift 2; timeout 60 $bin "$@" --reps 10 --json 2>&1 | j | sed "s/^/$tag /"; }
shapes="2048x16385 2048x16386 2048x16388 512x65537 512x65538 512x65540 4096x20000 2048x20001 1024x40001 1024x50304 1024x100002"
for pass in "bf16 1" "bf16 2" "f16 1"; do
  set -- $pass
  for s in $shapes; do
    run old $b/tilefuse-bench layernorm,add_rmsnorm --dtype $1 --shape $s
    run new $n/tilefuse-bench layernorm,add_rmsnorm --dtype $1 --shape $s
  done
done
