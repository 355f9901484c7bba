#!/usr/bin/env bash
# Builds tilefuse (Release) and stages bundle/: what a GPU machine with an NVIDIA driver
# but without LLVM or the CUDA toolkit needs to run the test suites, samples and
# benchmarks. Contents: the stripped libtilefuse.so*, every GPU test (tests/**/test_*gpu*: the
# CPU suites run in CI, and with them the bundle grows past its 64 MB budget),
# sample, bench and tilefuse-* tool executable, all with an $ORIGIN rpath, plus
# run-gpu-tests.sh and bench/gallery_table.sh. The script checks that every binary's libraries resolve (ldd) and
# that none needs libLLVM.
#
#   tools/device-bundle.sh [build dir]     (default: build-bundle/ in the source root)
#   BUNDLE_SKIP="name ..." leaves those executables out (default: tilefuse-tune, whose
#   5-6 MB would push the bundle past its budget; set BUNDLE_SKIP="" to include it)
#   then, on the GPU machine:  bundle/run-gpu-tests.sh   and e.g.  bundle/launch_overhead
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-bundle}
out=$root/bundle
warn_mb=40
max_mb=64

die() { echo "device-bundle: error: $*" >&2; exit 1; }
command -v cmake >/dev/null || die "cmake not found"
command -v strip >/dev/null || die "strip (binutils) not found"
command -v readelf >/dev/null || die "readelf (binutils) not found"

generator=()
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then generator=(-G Ninja); fi
# $ORIGIN first: binaries copied flat into bundle/ find libtilefuse.so next to them;
# relative build-tree paths keep the build tree itself runnable (test discovery).
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON '-DCMAKE_BUILD_RPATH=$ORIGIN' \
  -DTILEFUSE_BUILD_TESTS=ON -DTILEFUSE_BUILD_SAMPLES=ON -DTILEFUSE_BUILD_BENCH=ON
cmake --build "$build"

rm -rf "$out"
mkdir -p "$out"

# The library: copy the real file and its symlinks, then strip.
shopt -s nullglob
libs=("$build"/libtilefuse.so*)
[ ${#libs[@]} -gt 0 ] || die "no libtilefuse.so in $build"
cp -P "${libs[@]}" "$out"/
for f in "$out"/libtilefuse.so*; do
  [ -L "$f" ] || strip --strip-unneeded "$f"
done

is_elf_program() {  # an ELF executable (PIE or not), not a shared library
  local f=$1
  [ -f "$f" ] && [ -x "$f" ] || return 1
  case "$f" in *.so|*.so.*) return 1 ;; esac
  readelf -h "$f" >/dev/null 2>&1 || return 1
  readelf -lW "$f" 2>/dev/null | grep -q 'INTERP'  # has a program interpreter
}

skip=" ${BUNDLE_SKIP-tilefuse-tune} "
count=0
declare -A seen=()
while IFS= read -r -d '' f; do
  is_elf_program "$f" || continue
  name=$(basename "$f")
  [[ "$skip" == *" $name "* ]] && continue
  [ -z "${seen[$name]:-}" ] || die "two executables named $name (${seen[$name]} and $f)"
  seen[$name]=$f
  cp "$f" "$out/$name"
  strip --strip-unneeded "$out/$name"
  count=$((count + 1))
done < <(find "$build" \( -path '*/CMakeFiles' -o -path '*/tests/install/work' \) -prune -o -type f \( \
           \( -path "$build/tests/*" -name 'test_*gpu*' \) -o \
           -path "$build/samples/*" -o -path "$build/bench/*" -o -name 'tilefuse-*' \) -print0 | sort -z)
[ "$count" -gt 0 ] || die "no executables found in $build"

cat > "$out/run-gpu-tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs every test binary of this bundle (arguments are passed to each), prints PASS/FAIL
# per binary, the skip reasons reported, and a summary. Exits non-zero if any failed.
# TEST_PART=k/n runs the k-th of n parts (binaries by name, round robin), so that the
# suite can be split over commands with a time limit. TEST_JOBS=j runs j binaries at once
# (each with a kernel cache directory of its own); their reports follow in name order.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pass=0
fail=0
failed=()
part=${TEST_PART:-1/1}
part_k=${part%/*}
part_n=${part#*/}
jobs=${TEST_JOBS:-1}
index=0
names=()
run_one() {  # binary name [args]: its log and exit status under $logs
  local name=$1
  shift
  if [ "$jobs" -gt 1 ]; then
    TILEFUSE_CACHE_DIR="$logs/cache-$name" "$here/$name" "$@" >"$logs/$name.log" 2>&1
  else
    "$here/$name" "$@" >"$logs/$name.log" 2>&1
  fi
  echo $? >"$logs/$name.rc"
}
for t in "$here"/test_*; do
  [ -x "$t" ] || continue
  index=$((index + 1))
  [ $(( (index - 1) % part_n + 1 )) -eq "$part_k" ] || continue
  name=$(basename "$t")
  names+=("$name")
  if [ "$jobs" -gt 1 ]; then
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one "$name" "$@" &
  else
    run_one "$name" "$@"
  fi
done
wait
for name in "${names[@]}"; do
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 255)
  if [ "$rc" -eq 0 ]; then
    pass=$((pass + 1))
    echo "PASS $name: $(grep -h 'test cases:' "$logs/$name.log" | tail -n 1 | sed 's/^\[doctest\] *//')"
  else
    fail=$((fail + 1))
    failed+=("$name")
    echo "FAIL $name (exit $rc); last lines of its output:"
    tail -n 60 "$logs/$name.log" | sed 's/^/    /'
  fi
  grep -h '^\[skip\]' "$logs/$name.log" | sort | uniq -c | sed 's/^/    /' || true
done
echo "summary: $pass passed, $fail failed${failed[*]:+ (${failed[*]})}"
[ "$fail" -eq 0 ]
EOF
chmod +x "$out/run-gpu-tests.sh"
cp "$root/bench/gallery_table.sh" "$root/bench/tensor_core_table.sh" "$root/bench/training_table.sh" \
  "$root/bench/width_sweep.sh" "$root/bench/fp8_gemm.sh" "$root/bench/fp8_gemm_peer.py" "$out/"  # tables with the peers (need peers.py copied in), the width sweep, the FP8 GEMM

# Every binary must resolve its libraries from the bundle and the base system alone.
status=0
for f in "$out"/*; do
  [ -L "$f" ] && continue
  case "$f" in *.sh | *.py) continue ;; esac
  deps=$(env -u LD_LIBRARY_PATH ldd "$f" 2>&1) || { echo "$deps" >&2; die "ldd failed on $f"; }
  if grep -q 'not found' <<<"$deps"; then
    echo "device-bundle: $(basename "$f") has unresolved libraries:" >&2
    grep 'not found' <<<"$deps" >&2
    status=1
  fi
  if grep -qiE 'libLLVM|libcuda\.so' <<<"$deps"; then
    echo "device-bundle: $(basename "$f") links $(grep -oiE 'libLLVM[^ ]*|libcuda\.so[^ ]*' <<<"$deps" | head -n 1)" \
         "dynamically; the GPU machine has neither LLVM nor a toolkit, and libcuda must be loaded at run time" >&2
    status=1
  fi
  case "$(basename "$f")" in
    libtilefuse*) ;;
    *) readelf -dW "$f" | grep -qE '(RUNPATH|RPATH).*\$ORIGIN' ||
         { echo "device-bundle: $(basename "$f") has no \$ORIGIN rpath" >&2; status=1; } ;;
  esac
done
[ "$status" -eq 0 ] || die "the bundle would not run on the GPU machine (see above)"

size_mb=$(( $(du -sb "$out" | cut -f1) / 1048576 ))
echo "device-bundle: $count executables + libtilefuse in $out (${size_mb} MB)"
if [ "$size_mb" -gt "$max_mb" ]; then
  # Past what travels to the GPU machine as a folder: ship it compressed (xz: about a
  # fifth) and unpack it there, e.g. tar xJf bundlez/bundle.tar.xz -C /tmp.
  command -v xz >/dev/null || die "bundle is ${size_mb} MB (limit ${max_mb} MB) and xz is missing to compress it"
  mkdir -p "$root/bundlez"
  tar cJf "$root/bundlez/bundle.tar.xz" -C "$root" "$(basename "$out")"
  xz_mb=$(( $(stat -c %s "$root/bundlez/bundle.tar.xz") / 1048576 ))
  [ "$xz_mb" -le "$max_mb" ] || die "bundle is ${xz_mb} MB compressed (limit ${max_mb} MB)"
  echo "device-bundle: ${size_mb} MB is past ${max_mb} MB: compressed to bundlez/bundle.tar.xz (${xz_mb} MB)"
fi
[ "$size_mb" -le "$warn_mb" ] || echo "device-bundle: warning: bundle is ${size_mb} MB, above ${warn_mb} MB" >&2
exit 0
