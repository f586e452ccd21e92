#!/bin/bash
# run_signals_test.sh RDMAPROXY: signals sent to `rdmaproxy run` (on the build host, no RDMA
# needed) are the program's (docs/harness.md, "Signals"): any catchable one whose default ends
# a process reaches the program, which handles it as natively (a trap) or dies of it (the
# harness then ends like it); once the first program is gone, they reach what is left of its
# tree; SIGTSTP and SIGCONT stop and continue the program, and with it the harness; a trace
# whose reader went away (EPIPE) ends neither the harness nor the program; and
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

# gone PID: waits (up to 10 s) until process PID no longer exists (reaped).
gone() {
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  fail "process $1 did not end"
}

# signaled SIGNAL WANT_STATUS READY OUT [--after-gone PIDFILE] ARGS...: runs `rdmaproxy run
# ARGS` (output to OUT), sends SIGNAL to the harness once the program wrote READY (and the
# process whose pid PIDFILE holds is gone), and checks the harness's status.
signaled() {
  local sig=$1 want=$2 ready=$3 out=$4 pid rc=0 first=
  shift 4
  if [[ $1 == --after-gone ]]; then first=$2; shift 2; fi
  "$rxp" run "$@" >"$out" 2>&1 &
  pid=$!
  started "$ready"
  sleep 0.3
  if [[ -n $first ]]; then gone "$(cat "$first")"; fi
  kill "-$sig" "$pid"
  wait "$pid" || rc=$?
  ((rc == want)) || fail "SIG$sig: status $rc, want $want ($(cat "$out"))"
}

# A signal the program traps: it runs the trap and goes on, as natively. (It waits for the
# signal, however slow the machine: bash's `wait` returns when a trapped signal comes.)
signaled USR2 0 "$work/up1" "$work/out1" -- bash -c \
  "sleep 30 & s=\$!; trap 'echo trapped USR2; kill \$s' USR2; echo up >$work/up1; wait \$s; echo finished"
grep -q '^trapped USR2$' "$work/out1" && grep -q '^finished$' "$work/out1" ||
  fail "trapped USR2: the program did not run its trap and go on: $(cat "$work/out1")"
echo "a trapped SIGUSR2 sent to the harness ran the program's trap; the program went on"

# One it does not handle: it dies of it, and the harness ends like it (128 + 10).
signaled USR1 138 "$work/up2" "$work/out2" -- bash -c "echo up >$work/up2; exec sleep 30"
echo "an unhandled SIGUSR1 killed the program; the harness ended with 138"

# The first program exits and leaves a child: a SIGTERM to the harness reaches the child, and
# the harness ends with the first program's status.
# (`gone` waits until the first program has been reaped: a SIGTERM before that is its own.)
signaled TERM 3 "$work/child" "$work/out3" --after-gone "$work/first" \
  -- bash -c "echo \$\$ >$work/first; sleep 30 & echo \$! >$work/child; exit 3"
child=$(cat "$work/child")
for _ in $(seq 50); do
  state=$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null || echo gone)
  [[ $state == gone || $state == Z ]] && break
  sleep 0.1
done
[[ $state == gone || $state == Z ]] || fail "the first program's child $child still runs ($state)"
echo "SIGTERM after the first program exited reached its child; the harness ended with 3"

# kill -TSTP to the harness stops the program (as natively) and then the harness, so its
# waiter sees a stopped job; kill -CONT continues both. The program writes ticks with no call
# that stops for the harness (a builtin echo to an fd it holds): before, it ran on.
# state PID: the state letter of process PID (T: stopped; t: stopped under the tracer).
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo gone; }
# until_state PID LETTERS: waits (up to 10 s) until PID's state is one of LETTERS.
until_state() {
  for _ in $(seq 100); do [[ $1 == *"$(state "$2")"* ]] && return 0; sleep 0.1; done
  fail "process $2 is in state $(state "$2"), want one of $1"
}
ticks() { wc -l <"$work/ticks"; }
# Job control (set -m) puts the job in a process group of its own: stop signals are discarded
# in an orphaned one (a script run by setsid, as in the guests), natively and under the harness.
set -m
"$rxp" run -- bash -c "exec 3>>$work/ticks; echo up >$work/up5; for ((i = 0; ; i++)); do echo \$i >&3; done" &
pid=$!
started "$work/up5"
program=$(pgrep -P "$pid")
kill -TSTP "$pid"
until_state Tt "$program"
until_state T "$pid"
before=$(ticks); sleep 0.5
(($(ticks) == before)) || fail "SIGTSTP to the harness: the program went on writing"
kill -CONT "$pid"
until_state RSD "$pid"
for _ in $(seq 100); do (($(ticks) > before)) && break; sleep 0.1; done
(($(ticks) > before)) || fail "SIGCONT to the harness: the program did not go on"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
((rc == 143)) || fail "SIGTERM after SIGTSTP/SIGCONT: status $rc, want 143"
set +m
echo "kill -TSTP stopped the program and then the harness; kill -CONT continued both"

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
