#!/usr/bin/env bash
# Run 5: the whole GPU suite on this session's final code; then f32 LayerNorm on few long
# rows: the split schedule (the heuristic below 132 rows) against the new held-chunk
# cluster programs (--set), two rounds.
b=${1:?bundle}; out=${2:?out}
echo "#### suite"
(cd $b && TILEFUSE_CACHE_DIR=$(mktemp -d) TEST_JOBS=4 timeout 330 ./run-gpu-tests.sh 2>&1 | tail -26)
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c5 && export TILEFUSE_CACHE_DIR=/tmp/c5
for round in 1 2; do
  echo "#### round $round split (heuristic)"
  timeout 60 ./tilefuse-bench layernorm --dtype f32 --shape 128x262144,64x262144,32x262144 --reps 10 2>&1 | grep -E " ok | FAIL|rror" | cut -c1-150
  echo "#### round $round clusters of 16 x 4 x 4096 held"
  timeout 60 ./tilefuse-bench layernorm --dtype f32 --shape 128x262144,64x262144,32x262144 --set SPLIT=0 --set BLOCK=4096 --set CHUNKS=4 --set HELD=4 --set num_warps=8 --set cluster=16 --reps 10 2>&1 | grep -E " ok | FAIL|rror" | cut -c1-150
  echo "#### round $round split (heuristic) 256x131072"
  timeout 60 ./tilefuse-bench layernorm --dtype f32 --shape 64x131072,128x131072 --reps 10 2>&1 | grep -E " ok | FAIL|rror" | cut -c1-150
  echo "#### round $round clusters of 16 x 2 x 4096 held"
  timeout 60 ./tilefuse-bench layernorm --dtype f32 --shape 64x131072,128x131072 --set SPLIT=0 --set BLOCK=4096 --set CHUNKS=2 --set HELD=2 --set num_warps=4 --set cluster=16 --reps 10 2>&1 | grep -E " ok | FAIL|rror" | cut -c1-150
done
