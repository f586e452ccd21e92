#!/bin/bash
# bench_on_host.sh BUILD_DIR: tests/bench/run-on-host.sh, the benchmarks' runner for a real RDMA
# host, run in the guest as if it were one (devices found through /sys, not the test bed's env):
# bad usage is refused with exit 2 before anything runs, and a --quick run of all four
# benchmarks completes with every summary line. Its figures are not checked (--quick is brief)
# and its output is shown indented, so that it is not read as the benchmarks' own.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: bench_on_host.sh BUILD_DIR}
runner=tests/bench/run-on-host.sh

# refused ARGS...: the runner must exit 2 and say why on stderr.
refused() {
  local err status=0
  err=$("$runner" --build "$build" "$@" 2>&1 >/dev/null) || status=$?
  [[ $status == 2 && $err == run-on-host:* ]] || {
    echo "FAIL: '$*' gave exit $status, stderr: $err"
    exit 1
  }
  echo "refused as expected: $* -> $err"
}
refused --node0 nosuch0:1:10.0.0.1
refused --node0 "$RXP_NODE0_DEV"
refused no_such_bench
refused --no-such-option

# Unset the test bed's node variables: the runner must find the device itself.
out=$(env -u RXP_NODE0_DEV -u RXP_NODE1_DEV "$runner" --build "$build" --quick 2>&1) || {
  sed 's/^/  | /' <<<"$out"
  echo "FAIL: run-on-host.sh --quick failed"
  exit 1
}
# Shown indented: --quick figures are noise, and the benchmarks' own lines start at the left
# margin in the test log (vm.bench.control_path, ...), where they are what is reported.
sed 's/^/  | /' <<<"$out"
summary=$(sed -n '/^== summary/,$p' <<<"$out")
for pattern in '^run-on-host: node0 rxe' '^syscall mix, untouched' '^control path: native' \
               '^floor:' '^ib_write_bw, ' '^REG_MR 64 KiB' '^largest added median'; do
  grep -qE "$pattern" <<<"$out" || { echo "FAIL: no line matching $pattern"; exit 1; }
done
grep -q FAILED <<<"$summary" && { echo "FAIL: a benchmark failed"; exit 1; }
echo "PASS: run-on-host.sh ran all four benchmarks on $(sed -n 's/^run-on-host: node0 \([^ ]*\).*/\1/p' <<<"$out")"
