#!/usr/bin/env bash
# Run 4: the whole GPU suite (run-gpu-tests.sh) from the bundle of this commit, timed.
b=${1:?bundle}
export TILEFUSE_CACHE_DIR=$(mktemp -d)
time $b/run-gpu-tests.sh 2>&1
