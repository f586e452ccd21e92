#!/bin/bash
# bench_control_path.sh BUILD_DIR: issue 4's benchmark (b) -- a verbs control-path loop (open,
# alloc_pd, reg_mr, create_cq, create_qp, modify to RTS, destroy) natively and under
# `rdmaproxy run` in the same boot, as loops/s and their ratio (target: proxied within 3x).
# Prints figures; asserts nothing about timing.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: bench_control_path.sh BUILD_DIR}
seconds=${SECONDS_PER_RUN:-5}
loop=$build/tests/bench/rxp_verbs_loop
rate() { sed -n 's/.*= \([0-9.]*\) loops\/s/\1/p' <<<"$1"; }
# proxied_loop STATS_FILE [RUN_OPTION...]: the loop under `rdmaproxy run --stats`.
proxied_loop() {
  local stats=$1
  shift
  "$build/tools/rdmaproxy" run --stats "$@" -- "$loop" "$RXP_NODE0_DEV" "$RXP_NODE0_GID" "$seconds" 2>"$stats"
}
# print_ratio LABEL PROXIED_OUTPUT TAIL: one line of rates and their ratio (TAIL formats it).
print_ratio() {
  awk -v label="$1" -v n="$(rate "$native")" -v p="$(rate "$2")" -v tail="$3" 'BEGIN {
    printf "%s: native %.1f loops/s, proxied %.1f loops/s: " tail "\n", label, n, p, n / p
    exit !(n > 0 && p > 0) }'
}
native=$("$loop" "$RXP_NODE0_DEV" "$RXP_NODE0_GID" "$seconds")
echo "native:  $native"
# The bare round trip is timed just before and just after the proxied run (see below).
floor_before=$("$build/tests/bench/rxp_stop_floor" 2000)
proxied=$(proxied_loop "$RXP_SHARE/control_path.stats")
floor_after=$("$build/tests/bench/rxp_stop_floor" 2000)
echo "proxied: $proxied"
sed 's/^/  /' "$RXP_SHARE/control_path.stats"
print_ratio "control path" "$proxied" "the proxy takes %.2fx the time (target <= 3x)"

# The same under a tracer that polls for the next stop before it sleeps (--stop-poll-us, off by
# default; docs/harness.md, "Cost"): one proxied program with an idle CPU beside it, the case
# polling is for.
polled=$(proxied_loop "$RXP_SHARE/control_path_polled.stats" --stop-poll-us 1000)
echo "polling: $polled"
grep 'waits for a stop' "$RXP_SHARE/control_path_polled.stats" | sed 's/^/  /' || true
print_ratio "control path, --stop-poll-us 1000" "$polled" "%.2fx the time"

# The floor under that ratio on this machine: every stop is at least one tracee -> tracer ->
# tracee round trip, whatever the harness does in it. rxp_stop_floor times a bare one (ptrace,
# and a seccomp user notification for comparison) just before and just after the proxied run;
# the smaller of the two is used. This run's stop counts (--stats, whole run over its loops) say
# how many a loop took. A bare round trip waits on the scheduler twice, so on a loaded host it
# can cost more than the proxied run's stops did on average: the floor is then not comparable
# and the script says so instead of printing it.
echo "bare round trips before the proxied run:"
sed 's/^/  /' <<<"$floor_before"
echo "and after it:"
sed 's/^/  /' <<<"$floor_after"
stats=$(cat "$RXP_SHARE/control_path.stats")
count() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" <<<"$stats" | sed -n 1p; }
figure() { sed -n "s/^ *$2 *\([0-9.]*\).*/\1/p" <<<"$1"; }
us() {  # the smaller of the two timings of bare round trip $1
  awk -v a="$(figure "$floor_before" "$1")" -v b="$(figure "$floor_after" "$1")" \
    'BEGIN { a += 0; b += 0; print (a > 0 && (b <= 0 || a < b)) ? a : b }'
}
loops=$(sed -n 's/.*loops: \([0-9]*\) in.*/\1/p' <<<"$proxied")
awk -v n="$(rate "$native")" -v p="$(rate "$proxied")" -v loops="$loops" \
    -v seccomp="$(count 'seccomp')" -v exits="$(count 'syscall-exit')" \
    -v injected="$(count 'injected')" -v trace="$(us ptrace)" -v notif="$(us user-notif)" \
    -v commands="$(count 'commands')" -v proxying="$(us proxying)" '
  # A floor above the measured ratio came from round trips timed under other load: say so.
  function comparable(what, ratio) {
    if (ratio <= measured) return 1
    printf "floor: %s not comparable in this run: it would be %.2fx, more than the %.2fx measured (the host was loaded differently while the bare round trips ran)\n",
      what, ratio, measured
    return 0
  }
  BEGIN {
  if (loops <= 0 || n <= 0 || p <= 0 || trace <= 0) exit 1
  native_ms = 1000 / n; measured = n / p
  stops = (seccomp + exits + injected) / loops; entries = seccomp / loops
  floor = 1 + stops * trace / 1000 / native_ms
  printf "floor: a loop took %.1f stops (%.1f seccomp, %.1f syscall-exit, %.1f injected); a bare ptrace stop cost %.1f us\n",
    stops, entries, exits / loops, injected / loops, trace
  if (!comparable("ptrace", floor)) exit 0
  printf "floor: %.2f ms of bare stops on top of native'"'"'s %.2f ms per loop: %.2fx is the least any ptrace harness with these stops could take here (measured %.2fx)\n",
    stops * trace / 1000, native_ms, floor, measured
  # Each device command must at least be read and answered: a stop with the least work a
  # proxy does in it (registers, the request, the result), nothing else, no engine.
  if (proxying > 0 && commands > 0) {
    proxy_floor = 1 + commands / loops * proxying / 1000 / native_ms
    if (comparable(sprintf("proxying stops (%.1f us each)", proxying), proxy_floor))
      printf "floor: the %.1f device commands a loop makes, each in one stop with the least a ptrace proxy does there (registers, 64 bytes of the request, the result: %.1f us), and no other stop: %.2fx\n",
        commands / loops, proxying, proxy_floor
  }
  if (notif <= 0) exit 0
  notif_floor = 1 + entries * notif / 1000 / native_ms
  if (comparable(sprintf("user notifications (%.1f us each)", notif), notif_floor))
    printf "floor: the %.1f seccomp stops alone, as user notifications (%.1f us each): %.2fx -- the least for any interposer that sees each proxied call out of process\n",
      entries, notif, notif_floor }'
