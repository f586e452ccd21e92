#!/bin/bash
# The harness as an unprivileged user (nobody): no capability is needed to trace one's own
# children and install the filter. And the program, which runs as the same user, cannot reach
# the harness itself (attach it, read its memory, take its descriptors), even where Yama would
# let it (ptrace_scope 0, set for the check): the harness is not dumpable.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
echo "yama ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo absent)"
as_nobody id
native=$(as_nobody ibv_devinfo -v)
proxied=$(as_nobody "$RXP_RDMAPROXY" run --stats -- ibv_devinfo -v)
rxp_diff "$(rxp_devinfo_blocks "$native")" "$(rxp_devinfo_blocks "$proxied")"
nobody_run() { as_nobody "$RXP_RDMAPROXY" run -- "$@"; }
rxp_pair tcp:18515 \
  nobody_run ibv_rc_pingpong -d "$RXP_NODE1_DEV" -g "$RXP_NODE1_GID" -n 50 -- \
  nobody_run ibv_rc_pingpong -d "$RXP_NODE0_DEV" -g "$RXP_NODE0_GID" -n 50 "$RXP_NODE1_IP"
rxp_expect "$RXP_CLIENT_OUT" "50 iters in" "the client's iteration summary"

# A root harness whose program drops to another user (a launcher's setpriv or runuser, a
# daemon's setuid): the /dev and /sys view the harness made must stay readable to it, as the
# host's are. ibstat reads every port attribute from /sys (libibumad).
native_ibstat=$(as_nobody ibstat)
for view in --sysfs-from-host ""; do
  dropped=$("$RXP_RDMAPROXY" run $view -- setpriv --reuid=65534 --regid=65534 --clear-groups \
              --inh-caps=-all ibstat 2>/tmp/dropped.err) ||
    { cat /tmp/dropped.err; echo "FAIL: ibstat after dropping to nobody under 'run $view'"; exit 1; }
  rxp_diff "$native_ibstat" "$dropped" ||
    { echo "FAIL: ibstat after dropping to nobody under 'run $view' differs from native"; exit 1; }
done
echo "a program that drops to nobody under a root harness reads its /sys as natively"

testee=$RXP_BUILD/tools/harness/rxp_harness_testee
scope_file=/proc/sys/kernel/yama/ptrace_scope
scope=$(cat "$scope_file" 2>/dev/null || true)
if [[ -n $scope ]]; then
  trap 'echo "$scope" > "$scope_file"' EXIT
  echo 0 > "$scope_file"
fi
# Natively the probe reaches its parent, a shell of the same user (so a check that cannot
# reach anything fails here); under the harness, none of the routes may. A harness its program
# could attach would hang (each would wait for the other's ptrace-stops): killed after 60 s.
parent_native=$(as_nobody bash -c "$testee reach-tracer; true")
under_harness=$(timeout -s KILL 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
                  --inh-caps=-all "$RXP_RDMAPROXY" run -- "$testee" reach-tracer || true)
echo "natively, toward the parent shell:"; echo "$parent_native"
echo "under the harness, toward the harness:"; echo "$under_harness"
if ! grep -q '^ptrace_seize ok' <<<"$parent_native" || ! grep -q '^process_vm_readv ok' <<<"$parent_native"; then
  echo "FAIL: the probe does not reach a same-user parent natively"; exit 1
fi
if [[ $(grep -c ' errno E' <<<"$under_harness") != 5 ]]; then
  echo "FAIL: the program reaches the harness by a route above"; exit 1
fi
echo "unprivileged: ibv_devinfo identical, rc_pingpong passed, the harness unreachable by its program (5 routes)"
