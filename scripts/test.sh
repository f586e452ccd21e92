#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root) or a warm checkout:
#   1. installs the Debian packages (scripts/install-deps.sh; does nothing when present);
#   2. builds everything with warnings as errors in build/ (the VM kernel is fetched and the
#      initramfs built as part of the build);
#   3. runs every CTest test there: unit tests and the soft-RoCE VM tests (labels unit, vm);
#   4. rebuilds the unit tests with ASan + UBSan in build-asan/ and runs them;
#   5. builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs each for
#      RDMAPROXY_FUZZ_SECONDS (default 60) from a fixed libFuzzer seed (RDMAPROXY_FUZZ_SEED, default
#      1), seeded from the captured ABI vectors.
# Extra arguments go to both ctest runs (e.g. -R rping, -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)
t0=$SECONDS

# ctest in DIR with the given arguments; when tests fail, their output is printed once more
# at the end (scripts/print-failed-tests.sh) and the run stops with ctest's status.
run_ctest() {
  local dir=$1 status=0
  shift
  (cd "$dir" && "$@") || status=$?
  if ((status != 0)); then
    "$root/scripts/print-failed-tests.sh" "$dir"
    echo "== tests failed in $dir (ctest exit $status) after $((SECONDS - t0))s ==" >&2
    exit "$status"
  fi
}

"$root/scripts/install-deps.sh"

echo "== build (warnings are errors) =="
cmake -S . -B build -G Ninja -DRDMAPROXY_WERROR=ON
cmake --build build -j "$jobs"

echo "== unit + VM tests =="
run_ctest build ctest --output-on-failure -j "$jobs" "$@"

echo "== unit tests under ASan + UBSan =="
cmake -S . -B build-asan -G Ninja -DRDMAPROXY_WERROR=ON -DRDMAPROXY_SANITIZE=ON \
      -DRDMAPROXY_VM_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest build-asan ctest --output-on-failure -j "$jobs" -L unit "$@"

fuzz_seconds=${RDMAPROXY_FUZZ_SECONDS:-60}
echo "== fuzz targets (libFuzzer + ASan + UBSan, ${fuzz_seconds}s each) =="
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DRDMAPROXY_WERROR=ON \
      -DRDMAPROXY_FUZZ=ON -DRDMAPROXY_SANITIZE=ON -DRDMAPROXY_VM_TESTS=OFF \
      -DRDMAPROXY_FUZZ_SECONDS="$fuzz_seconds" -DRDMAPROXY_FUZZ_SEED="${RDMAPROXY_FUZZ_SEED:-1}"
cmake --build build-fuzz -j "$jobs" --target rxp_fuzz_ioctl rxp_fuzz_write rxp_fuzz_ucma rxp_fuzz_sysfs_snapshot rxp_fuzz_engine \
      rxp_fuzz_seed_corpora
run_ctest build-fuzz ctest --output-on-failure -j "$jobs" -L fuzz

echo "== all tests passed in $((SECONDS - t0))s =="
