#!/bin/bash
# agent.sh: PID 1 of the test-bed guest (after initramfs-init.sh chroots into the host root).
#
# It builds the two-node network (setup-testbed.sh), records the RDMA resource baseline, says
# "ready" through the results share, then runs requests that vmctl drops into SHARE/queue, one
# at a time, each in the test cgroup (killed whole afterwards, so no test leaves a process
# behind) and under a guest-side timeout. After each test it checks that `rdma resource show`
# is back to the baseline. Results go to SHARE/results/NAME.{log,rc}. With no request for
# rxp.idle seconds, or on SHARE/queue/.shutdown, it powers the guest off, so a VM whose
# controller went away does not run on.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

param() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
share=$(param rxp.share)
idle=$(param rxp.idle); idle=${idle:-900}
mode=$(param rxp.mode)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

exec </dev/null >/dev/console 2>&1
echo 1 >/proc/sys/kernel/sysrq

say() { echo "rxp-agent: $*"; }
poweroff_now() {
  say "powering off ($1)"
  sync
  echo o >/proc/sysrq-trigger
  sleep 30
}

mkdir -p /tmp /var/tmp /root 2>/dev/null
hostname rxp-guest 2>/dev/null || true

# Waits without forking: bash's `read -t` on a FIFO this shell holds open at both ends, so the
# read never sees data or EOF and returns when the timeout ends. An external command costs a fork
# and an exec, about 110 ms of emulated CPU under TCG: with `sleep 0.2` in the idle loop an idle
# guest kept about a third of a host core busy, slowing whatever ran beside it on the host.
# The per-request work below avoids external commands where a builtin does for the same reason.
nap_fifo=/tmp/rxp-agent-nap.$$
rm -f "$nap_fifo"
mkfifo "$nap_fifo" && exec {nap_fd}<>"$nap_fifo"
rm -f "$nap_fifo"
nap() { read -rt "$1" -u "$nap_fd" _ || true; }

if ! "$here/setup-testbed.sh" "$share"; then
  echo "setup failed" >"$share/failed"
  poweroff_now "test bed setup failed"
fi
say "test bed up: $(tr '\n' ' ' <"$share/testbed.env")"

# The resource baseline: per-device object counts with no test running.
resource_counts() { rdma resource show 2>&1; }
baseline=$(resource_counts)
printf '%s\n' "$baseline" >"$share/baseline"

if [[ "$mode" == shell ]]; then
  say "interactive shell; the test bed env is in $share/testbed.env; 'poweroff -f' or Ctrl-D ends it"
  (cd /root && setsid -c bash -l <>/dev/console >&0 2>&1)
  poweroff_now "shell exited"
fi

mkdir -p "$share/queue" "$share/results"
read -r up _ </proc/uptime
echo "$up" >"$share/ready.tmp" && mv "$share/ready.tmp" "$share/ready"
say "ready after ${up}s"

# Waits until the RDMA objects are back to the baseline (the kernel releases some
# asynchronously) for up to 10 s; prints the difference if they are not.
check_resources() {
  local now i
  for ((i = 0; i < 50; i++)); do
    now=$(resource_counts)
    [[ "$now" == "$baseline" ]] && return 0
    nap 0.2
  done
  echo "rdma resource show is not back to its baseline:"
  diff <(printf '%s\n' "$baseline") <(printf '%s\n' "$now") | sed 's/^/  /'
  return 1
}

# Every test runs in this one cgroup, emptied (killed whole) after each.
test_cgroup=/sys/fs/cgroup/rxp-test
mkdir -p "$test_cgroup"
last_generation=""

run_request() {
  local req=$1 name timeout_s cmd cg=$test_cgroup log rc
  name=${req##*/}
  name=${name%.req}
  # The request is read, then removed before it runs, so that it runs once whatever happens.
  read -r timeout_s <"$req/timeout"
  read -r -d '' cmd <"$req/cmd"
  local generation=""
  read -r generation <"$req/generation" 2>/dev/null
  rm -rf "$req"
  [[ -e "$req" ]] && { say "cannot remove $req"; poweroff_now "request queue not writable"; }
  log="$share/results/$name.log"
  # When the host has rebuilt binaries since the last test (vmctl passes the build's generation),
  # drop the page cache and the dentries, so that no stale page of a 9p file is mapped into the
  # new run and the overlay resolves a replaced file to the new one. Best effort: a dentry in use
  # stays (docs/development.md: stop the guest after a rebuild; CTest boots a fresh one per run).
  # Not before every test: refilling the cache over 9p cost 0.6 to 1.1 s per conformance case.
  # The pages of host files are clean (the 9p mounts write through), so no `sync` first.
  if [[ -z "$generation" || "$generation" == every-request || "$generation" != "$last_generation" ]]; then
    echo 3 >/proc/sys/vm/drop_caches
    last_generation=$generation
    say "page cache dropped (build generation ${generation:-unknown})"
  fi
  say "run $name (timeout ${timeout_s}s)"
  local t0 t1
  t0=$EPOCHREALTIME
  (
    echo "$BASHPID" >"$cg/cgroup.procs"
    exec timeout -k 5 "$timeout_s" bash -c "$cmd"
  ) >"$log" 2>&1 </dev/null
  rc=$?
  t1=$EPOCHREALTIME
  # Kill whatever the test left (servers, daemons) and wait until the cgroup is empty (a read
  # of cgroup.procs that finds no line, or no file).
  echo 1 >"$cg/cgroup.kill" 2>/dev/null
  for ((i = 0; i < 100; i++)); do
    { read -r _ <"$cg/cgroup.procs"; } 2>/dev/null || break
    nap 0.1
  done
  if ((rc == 124 || rc == 137)); then
    echo "vm: TIMEOUT: the test ran past its ${timeout_s}s guest-side limit and was killed" >>"$log"
  fi
  if ! check_resources >>"$log"; then
    ((rc == 0)) && rc=98
    baseline=$(resource_counts)  # report the leak once, not in every later test
  fi
  # EPOCHREALTIME is seconds.microseconds (LANG=C.UTF-8 above): the run's tenths, rounded.
  local tenths=$(((${t1/./} - ${t0/./} + 50000) / 100000))
  printf 'vm: %s rc=%d in %d.%ds\n' "$name" "$rc" $((tenths / 10)) $((tenths % 10)) >>"$log"
  say "done $name rc=$rc"
  echo "$rc" >"$share/results/$name.rc.tmp"
  mv "$share/results/$name.rc.tmp" "$share/results/$name.rc"
}

last=$SECONDS
while true; do
  [[ -e "$share/queue/.shutdown" ]] && poweroff_now "shutdown requested"
  shopt -s nullglob
  reqs=("$share"/queue/*.req)
  shopt -u nullglob
  if ((${#reqs[@]} > 0)); then
    run_request "${reqs[0]}"
    last=$SECONDS
    continue
  fi
  ((SECONDS - last > idle)) && poweroff_now "idle for ${idle}s"
  nap 0.2
done
