#!/usr/bin/env bash
# A broken VM test must fail, under its own name, with the console tail and then the guest's
# output.
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
# The console tail first, the guest's own output after it: a report that keeps only the end of
# a failed test's output must still show the test's reason.
console_end=$(grep -n -- '---- end of guest console' <<<"$out" | tail -n 1 | cut -d: -f1)
own_last=$(grep -n 'rxe_does_not_exist' <<<"$out" | tail -n 1 | cut -d: -f1)
((own_last > console_end)) || fail "the guest's own output comes before the console tail"
echo "selftest: failure reported with name, guest output and console tail (rc=$rc)"
