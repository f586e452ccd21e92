#!/usr/bin/env bash
# A boot that fails must say why, be retried once with a fresh guest, and leave nothing running.
# Uses its own state directory (--state), so the shared test-bed guest is not touched:
#   1. a boot limit of 1 s, which no boot meets: two attempts, each "no ready within 1s";
#   2. a memory size qemu refuses: "qemu exited (status N)" with qemu's own message.
set -uo pipefail
vmctl=$1; shift
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
fail() { echo "selftest: $*"; exit 1; }

out=$(RXP_VM_BOOT_TIMEOUT=1 "$vmctl" "$@" --state "$state/slow" start 2>&1)
rc=$?
echo "$out"
echo "----"
((rc != 0)) || fail "a boot past its limit was reported as ready"
(($(grep -c 'did not become ready (kernel .*): no "ready" within 1s' <<<"$out") == 2)) ||
  fail "expected two attempts, each failing on the time limit"
grep -q 'boot attempt 1 of 2 failed; booting a fresh guest' <<<"$out" || fail "no retry reported"
grep -q -- '---- guest console' <<<"$out" || fail "the console tail is missing"
status=$("$vmctl" "$@" --state "$state/slow" status)
[[ $status == "not running" ]] || fail "the failed guest was left running: $status"

out=$(RXP_VM_MEM=not-a-size RXP_VM_BOOT_ATTEMPTS=1 "$vmctl" "$@" --state "$state/bad" start 2>&1)
rc=$?
echo "$out"
echo "----"
((rc != 0)) || fail "a boot whose qemu exited was reported as ready"
grep -Eq 'qemu exited \(status [1-9][0-9]*\) before the guest was ready' <<<"$out" ||
  fail "the qemu exit and its status are not reported"
grep -q 'not-a-size' <<<"$out" || fail "qemu's own message is missing"
echo "selftest: failed boots are reported with their reason, retried, and leave no guest"
