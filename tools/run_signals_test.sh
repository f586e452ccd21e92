#!/bin/bash
# run_signals_test.sh RDMAPROXY: signals sent to `rdmaproxy run` (on the build host, no RDMA
# needed) are the program's (docs/harness.md, "Signals"): any catchable one whose default ends
# a process reaches the program, which handles it as natively (a trap) or dies of it (the
# harness then ends like it); once the first program is gone, they reach what is left of its
# tree; a trace whose reader went away (EPIPE) ends neither the harness nor the program; and
# the device view's directory is gone after each run.
set -euo pipefail
rxp=${1:?usage: run_signals_test.sh RDMAPROXY}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export TMPDIR=$work/tmp
mkdir "$TMPDIR"

# started FILE: waits (up to 10 s) until the program wrote FILE, i.e. it runs and its traps are set.
started() {
  for _ in $(seq 100); do [[ -s $1 ]] && return 0; sleep 0.1; done
  fail "the program never wrote $1"
}

# A signal the program traps: it runs the trap and goes on, as natively.
"$rxp" run -- bash -c "trap 'echo trapped USR2' USR2; echo up >$work/up1; sleep 1.5; echo finished" \
  >"$work/out1" 2>&1 &
pid=$!
started "$work/up1"
kill -USR2 "$pid"
rc=0; wait "$pid" || rc=$?
((rc == 0)) || fail "trapped USR2: status $rc, want 0 ($(cat "$work/out1"))"
grep -q '^trapped USR2$' "$work/out1" && grep -q '^finished$' "$work/out1" ||
  fail "trapped USR2: the program did not run its trap and go on: $(cat "$work/out1")"
echo "a trapped SIGUSR2 sent to the harness ran the program's trap; the program went on"

# One it does not handle: it dies of it, and the harness ends like it (128 + 10).
"$rxp" run -- bash -c "echo up >$work/up2; exec sleep 30" &
pid=$!
started "$work/up2"
sleep 0.3
kill -USR1 "$pid"
rc=0; wait "$pid" || rc=$?
((rc == 138)) || fail "SIGUSR1: status $rc, want 138"
echo "an unhandled SIGUSR1 killed the program; the harness ended with 138"

# The first program exits and leaves a child: a SIGTERM to the harness reaches the child.
"$rxp" run -- bash -c "sleep 30 & echo \$! >$work/child; exit 3" &
pid=$!
started "$work/child"
sleep 0.5
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
((rc == 3)) || fail "SIGTERM after the first program: status $rc, want its 3"
child=$(cat "$work/child")
for _ in $(seq 50); do
  state=$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null || echo gone)
  [[ $state == gone || $state == Z ]] && break
  sleep 0.1
done
[[ $state == gone || $state == Z ]] || fail "the first program's child $child still runs ($state)"
echo "SIGTERM after the first program exited reached its child; the harness ended with 3"

# The trace's reader goes away: writes fail with EPIPE, the run goes on to the end.
rc=0
"$rxp" run --trace --stats -- sh -c "sleep 0.5; ls /dev/infiniband >/dev/null 2>&1; echo done >$work/done" \
  2>&1 | true || true
rc=${PIPESTATUS[0]}
((rc == 0)) || fail "--trace to a closed pipe: status $rc, want 0"
[[ -s $work/done ]] || fail "--trace to a closed pipe: the program did not run to its end"
echo "a trace whose reader went away ended neither the harness nor the program"

leftover=$(ls -A "$TMPDIR")
[[ -z $leftover ]] || fail "left behind in TMPDIR: $leftover"
echo "no device view left behind"
