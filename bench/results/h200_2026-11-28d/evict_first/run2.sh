#!/usr/bin/env bash
# SwiGLU forward (and softmax fwd/bwd at 8192x16384) against the peers: config sweep,
# cache-hint variants (TF_EXP_NORMAL: loads without evict_first; TF_EXP_STEF: evict_first
# stores), flat rows (1 x M*N), peers.py in the same command.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
B=./tilefuse-bench
S=65536x1024,16384x4096,8192x16384,2048x65536,16384x5000
j() { grep -E '"kernel"' | sed -E 's/.*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \4 \5/'; }
for round in 1 2; do
  echo "== round $round heuristic"; $B swiglu --shape $S --json | j
  echo "== round $round loads normal"; TF_EXP_NORMAL=1 $B swiglu --shape $S --json | j
  echo "== round $round stores evict_first"; TF_EXP_STEF=1 $B swiglu --shape $S --json | j
  echo "== round $round flat"; $B swiglu --shape 1x67108864,1x81920000 --json | j
  for cfg in "512 2" "1024 1" "1024 2" "1024 4" "2048 2" "2048 4" "2048 8" "4096 4" "4096 8" "256 1"; do
    set -- $cfg
    echo "== round $round BLOCK=$1 warps=$2"; $B swiglu --shape $S --json --set BLOCK=$1 --set num_warps=$2 | j
  done
done
echo "== softmax / softmax_bwd 8192x16384"
$B softmax,softmax_bwd --shape 8192x16384 --json | j
python3 peers.py swiglu --dtype bf16 2>/dev/null | grep '^{'
python3 peers.py softmax_bwd --dtype bf16 --shape 8192x16384 2>/dev/null | grep '^{'
python3 peers.py swiglu --dtype bf16 2>/dev/null | grep '^{'
