#!/usr/bin/env bash
# Run 4 (new3/ = 510ad3d, as run 3): f32 rows on clusters of 4+ programs, uncapped (as
# the heuristics leave them) against the programs per SM the 16-bit rule would give them
# (cross-entropy with its 4 registers more) and a neighbour; cross-entropy, then softmax.
cd "${1:-$(dirname "$0")}"  # the bundle
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd new3 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$1" --dtype f32 --reps 10 --json --shape "$2" --set min_programs_per_sm=$3 | j); }
for r in 1 2; do
  echo "== cross_entropy round $r"
  for sp in 2048x151936:0:4 16384x50304:0:6:7 1024x100000:0:6:7 4096x128256:0:4:5 1024x200000:0:3:4 8192x24000:0:7:6 8192x40000:0:8:7 8192x32000:0:8 8192x65536:0:8; do
    IFS=: read -r s ps <<<"${sp%%:*}:${sp#*:}"; for p in ${ps//:/ }; do b cross_entropy $s $p; done
  done
  [ $r = 2 ] && break
  echo "== softmax"
  for sp in 2048x151936:0:4 16384x50304:0:7 1024x200000:0:3 4096x128256:0:5 8192x32000:0:5 8192x65536:0:5 8192x24000:0:7; do
    IFS=: read -r s ps <<<"${sp%%:*}:${sp#*:}"; for p in ${ps//:/ }; do b softmax $s $p; done
  done
done
