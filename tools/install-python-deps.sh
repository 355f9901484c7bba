#!/usr/bin/env bash
# Installs from PyPI what the Python package and its tests build with (nanobind, and
# numpy, pytest, ml_dtypes to run them) into the python3 on PATH; does nothing when all
# import. Without them the build skips the Python package and its tests, with a message.
set -uo pipefail
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null; then
  echo "install-python-deps: no $PYTHON on PATH; the Python package will be skipped"
  exit 0
fi
if "$PYTHON" -c "import nanobind, numpy, pytest, ml_dtypes" 2>/dev/null; then
  echo "install-python-deps: all Python dependencies present"
  exit 0
fi
echo "install-python-deps: pip install nanobind numpy pytest ml_dtypes"
if ! "$PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    "nanobind>=2.0" numpy pytest ml_dtypes; then
  echo "install-python-deps: pip failed; the Python package and its tests will be skipped" >&2
fi
exit 0
