#!/usr/bin/env bash
# A hung guest must be killed by the timeout and reported, not left running. The test hangs the
# guest for good: it sets kernel.panic=0 (wait forever instead of rebooting) and crashes the
# kernel through sysrq, so neither the agent nor the guest-side timeout ever runs again, while
# qemu stays up. vmctl must give up after timeout + grace, kill qemu and print the console tail;
# the next request then boots a fresh guest.
set -uo pipefail
vmctl=$1; shift
export RXP_VM_GRACE=5
t0=$SECONDS
out=$("$vmctl" "$@" exec --name selftest_hang --timeout 5 -- bash -c '
  echo 0 >/proc/sys/kernel/panic
  echo c >/proc/sysrq-trigger
  sleep 600' 2>&1)
rc=$?
took=$((SECONDS - t0))
echo "$out"
echo "----"
fail() { echo "selftest: $*"; exit 1; }
((rc != 0)) || fail "a hung guest was reported as success"
grep -q 'the guest is hung; killing it' <<<"$out" || fail "no hang report"
grep -q -- '---- guest console' <<<"$out" || fail "the console tail is missing"
((took < 60)) || fail "the hang took ${took}s to detect (limit 5s + 5s grace)"
status=$("$vmctl" "$@" status)
[[ $status == "not running" ]] || fail "the hung guest was left running: $status"
echo "selftest: hang detected and the guest killed after ${took}s"
# The next request must get a fresh, working guest.
"$vmctl" "$@" exec --name selftest_after_hang --timeout 60 -- ibv_devices ||
  fail "no working guest after the hang"
echo "selftest: a fresh guest answered after the hang"
