#!/usr/bin/env bash
# Adds to bundle/ (made by tools/device-bundle.sh) what the GPU machine needs to build the
# Python extension against the bundled libtilefuse with its own python3 (whose version
# may differ from this machine's) and to run the PyTorch GPU tests:
#   tools/device-bundle.sh build && tools/device-bundle-python.sh
#   then, on the GPU machine, from the repository root:  bash bundle/run-python-gpu-tests.sh
# It stages nanobind (from this machine's pip install), the Boost.Hana and DLPack headers
# and the build dir's pure-Python package; the extension is compiled there with g++.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=$root/bundle
die() { echo "device-bundle-python: error: $*" >&2; exit 1; }
[ -f "$out/libtilefuse.so.0" ] || die "run tools/device-bundle.sh first"
[ -d "$build/python/tilefuse" ] || die "no $build/python/tilefuse (build with the Python package)"
nb=$(python3 -c "import nanobind, os; print(os.path.dirname(nanobind.__file__))") || die "nanobind not installed"
rm -rf "$out/pybuild" "$out/python"
mkdir -p "$out/pybuild/inc/boost" "$out/pybuild/inc/dlpack" "$out/python"
cp -r "$nb" "$out/pybuild/nanobind"
cp -r /usr/include/boost/hana /usr/include/boost/hana.hpp "$out/pybuild/inc/boost/"
cp /usr/include/dlpack/dlpack.h "$out/pybuild/inc/dlpack/"
cp -r "$build/python/tilefuse" "$out/python/"
rm -f "$out"/python/tilefuse/_tilefuse*.so
cat > "$out/run-python-gpu-tests.sh" <<'SCRIPT'
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
export LD_LIBRARY_PATH="$here"
py_inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -f "$py_inc/Python.h" ] || { echo "no Python.h for $(python3 --version)"; exit 1; }
nb=$here/pybuild/nanobind
inc="-I$py_inc -I$nb/include -I$nb/ext/robin_map/include -I$here/pybuild/inc"
for d in include dsl/include backend/interp/include backend/cuda/include backend/nvptx/include autotune/include \
         kernels/include python/include; do inc="$inc -I$root/$d"; done
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
for s in "$root"/python/src/*.cpp "$nb/src/nb_combined.cpp"; do
  g++ -O2 -DNDEBUG -std=c++20 -fPIC -fvisibility=hidden $inc -c "$s" -o "$obj/$(basename "$s").o" &
done
wait
g++ -shared "$obj"/*.o -L"$here" -l:libtilefuse.so.0 -Wl,-rpath,'$ORIGIN/../..' \
  -o "$here/python/tilefuse/_tilefuse$ext" || exit 1
cd "$root"
PYTHONPATH="$here/python" python3 -m pytest -q -p no:cacheprovider python/tests/test_torch_gpu.py "$@"
SCRIPT
chmod +x "$out/run-python-gpu-tests.sh"
echo "device-bundle-python: staged in $out ($(du -sh "$out" | cut -f1)); run bundle/run-python-gpu-tests.sh there"
