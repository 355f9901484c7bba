#!/usr/bin/env bash
# Run 3: the count word read early (load_relaxed), polled only where short (new), against
# the previous commit (old/), alternating; the cross-entropy GPU tests,
# memcheck and ncu as run 1: the same script on that run's build.
exec bash "$(dirname "$0")/run1.sh" "$@"
