#!/usr/bin/env bash
# Run 3: new/ = the previous stop's final commit, new3/ = 510ad3d: the target logit out of
# the cluster exchange, cross-entropy's programs per SM with 4 registers over softmax's
# rule, 16-warp row programs at two per SM where they fit in 64 registers. The
# cross-entropy GPU test on new3; cross-entropy (mean) new against new3 over the standard
# and one-program shapes, a second round where the config changed; softmax f32 on the
# 16-warp programs; the neighbours of the new caps on new3.
cd "${1:-$(dirname "$0")}"  # the bundle
export TILEFUSE_CACHE_DIR=$(mktemp -d)
j() { grep -E '"kernel"' | sed -E 's/.*"kernel": "([^"]*)", "dtype": "([^"]*)".*"shape": "([^"]*)".*"gbs": ([0-9.]*).*"pct_copy": ([0-9.]*).*"check": ([a-z]*).*"config": "([^"]*)".*/\1 \2 \3 \5 \6 | \7/'; }
b() { (cd $1 && LD_LIBRARY_PATH=$PWD ./tilefuse-bench "$2" --reps 10 --json "${@:3}" | j); }
echo "== tests new3"
(cd new3 && LD_LIBRARY_PATH=$PWD ./test_gpu_cross_entropy 2>&1 | tail -3)
S=8192x32000,16384x50304,4096x128256,2048x151936,1024x256000,4096x50257,1024x100000,65536x1024,262144x512,16384x4099,32768x1000
C=16384x50304,4096x50257,1024x100000
for v in new new3; do echo "== $v round 1"; b $v cross_entropy --dtype bf16,f32 --shape $S; done
for v in new new3; do echo "== $v round 2"; b $v cross_entropy --dtype bf16 --shape $C; b $v cross_entropy --dtype f32 --shape 1024x256000,512x262144; done
for v in new new3; do echo "== $v softmax f32"; b $v softmax --dtype f32 --shape 1024x256000,512x262144; done
echo "== new3 neighbours"
b new3 cross_entropy --dtype bf16 --shape 1024x256000 --set min_programs_per_sm=2
b new3 cross_entropy --dtype f32 --shape 2048x151936 --set min_programs_per_sm=3
b new3 cross_entropy --dtype f32 --shape 2048x151936 --set min_programs_per_sm=4
b new3 cross_entropy --dtype bf16 --shape 8192x40000 --set min_programs_per_sm=7
b new3 cross_entropy --dtype bf16 --shape 8192x40000
