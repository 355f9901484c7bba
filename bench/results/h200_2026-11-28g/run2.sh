#!/usr/bin/env bash
# Run 2: the count word polled with one relaxed load beside the row loads (new), against
# the previous commit (old/), alternating; the cross-entropy GPU tests,
# memcheck and ncu as run 1: the same script on that run's build.
exec bash "$(dirname "$0")/run1.sh" "$@"
