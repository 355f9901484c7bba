#!/usr/bin/env bash
# Run 7 (prepared for the next session, not run): the GPU suite on the final code, in two
# parts (TEST_PART=1/2, then 2/2: one device command each, run 6 ran out of time after 11
# of 22 binaries), then the gallery's attention case (the one-stage PV_LAG race fixed
# after run 6) under compute-sanitizer racecheck.
b=${1:?bundle}; part=${2:?1/2 or 2/2}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
time TEST_PART=$part timeout 500 $b/run-gpu-tests.sh 2>&1
if [ "$part" = 2/2 ]; then
  TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 60 compute-sanitizer --tool racecheck $b/test_gpu_gallery \
    -tc='*flash attention forward*' 2>&1 | tail -4
fi
