#!/usr/bin/env bash
# Run 1: the whole GPU suite on the previous stop's code (fea6e26 + the runner's TEST_JOBS),
# six binaries at once, and beside it compute-sanitizer racecheck of the gallery's
# attention case (the one-stage PV_LAG race fixed after the previous session's run 6).
b=${1:?bundle}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
( TILEFUSE_CACHE_DIR=$(mktemp -d) timeout 540 compute-sanitizer --tool racecheck $b/test_gpu_gallery \
    -tc='*flash attention forward*' > /tmp/racecheck.txt 2>&1; echo "racecheck rc=$?" >> /tmp/racecheck.txt ) &
time TEST_JOBS=6 timeout 560 $b/run-gpu-tests.sh 2>&1
wait
echo "== racecheck (gallery attention)"; tail -6 /tmp/racecheck.txt
