#!/usr/bin/env bash
# Old (94a69e0, 11-26) against new (HEAD) tilefuse-bench, same process order, two rounds.
cd "$(dirname "$0")"; D=$PWD
python3 -c "import tarfile; tarfile.open('pk.tar.xz').extractall('.')"
nvidia-smi --query-gpu=name --format=csv,noheader
S=65536x1024,16384x5000,16384x4096,4096x1024
for round in 1 2; do for v in old new; do
  echo "== $v round $round"
  export LD_LIBRARY_PATH=$D/$v TILEFUSE_CACHE_DIR=$D/cache_$v
  for k in softmax rmsnorm layernorm; do $D/$v/tilefuse-bench $k --dtype bf16 --reps 20 --shape $S | grep -E "^$k "; done
  $D/$v/tilefuse-bench softmax --dtype f16 --reps 20 --shape 65536x1024,16384x5000 | grep -E "^softmax "
done; done
