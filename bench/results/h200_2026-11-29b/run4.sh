#!/usr/bin/env bash
# Run 4: the whole GPU suite (run-gpu-tests.sh) on the bundle of the final code (new/).
cd "${1:-$(dirname "$0")}"
export TILEFUSE_CACHE_DIR=$(mktemp -d)
new/run-gpu-tests.sh 2>&1
