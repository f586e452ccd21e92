#!/usr/bin/env bash
# A broken VM test must fail, under its own name, with the guest's output and console tail.
# Runs ibv_rc_pingpong pointed at a device that does not exist and checks what vmctl reports.
set -uo pipefail
vmctl=$1; shift
out=$("$vmctl" "$@" exec --name selftest_bad_device --timeout 60 -- \
      ibv_rc_pingpong -d rxe_does_not_exist -g 1 -n 10 2>&1)
rc=$?
echo "$out"
echo "----"
fail() { echo "selftest: $*"; exit 1; }
((rc != 0)) || fail "vmctl exec succeeded on a nonexistent device"
grep -q 'rxe_does_not_exist' <<<"$out" || fail "the guest's own output is missing"
grep -q 'selftest_bad_device: FAILED' <<<"$out" || fail "the failing test's name is missing"
grep -q -- '---- guest console' <<<"$out" || fail "the console tail is missing"
echo "selftest: failure reported with name, guest output and console tail (rc=$rc)"
