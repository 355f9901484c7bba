#!/usr/bin/env bash
# Run 10: the whole GPU suite from the bundle of the final commit (6c922f1), eight
# binaries at once.
b=${1:?bundle}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
time TEST_JOBS=8 timeout 250 $b/run-gpu-tests.sh 2>&1
