#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root) or a warm checkout:
#   1. installs the Debian packages (scripts/install-deps.sh; does nothing when present);
#   2. builds everything with warnings as errors in build/ (the VM kernel is fetched and the
#      initramfs built as part of the build);
#   3. runs every CTest test there: unit tests and the soft-RoCE VM tests (labels unit, vm);
#   4. rebuilds the unit tests with ASan + UBSan in build-asan/ and runs them.
# Extra arguments go to both ctest runs (e.g. -R rping, -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)
t0=$SECONDS

"$root/scripts/install-deps.sh"

echo "== build (warnings are errors) =="
cmake -S . -B build -G Ninja -DRDMAPROXY_WERROR=ON
cmake --build build -j "$jobs"

echo "== unit + VM tests =="
(cd build && ctest --output-on-failure -j "$jobs" "$@")

echo "== unit tests under ASan + UBSan =="
cmake -S . -B build-asan -G Ninja -DRDMAPROXY_WERROR=ON -DRDMAPROXY_SANITIZE=ON \
      -DRDMAPROXY_VM_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j "$jobs" -L unit "$@")

echo "== all tests passed in $((SECONDS - t0))s =="
