#!/bin/bash
# RDMA netlink from a network namespace of the program's own: the kernel lists the devices of
# the namespace a NETLINK_RDMA socket was made in, so with the RDMA subsystem in exclusive mode
# (`rdma system set netns exclusive`) a program that entered a new namespace (`unshare -n`)
# finds no device, and the harness, which answers the device queries itself, must ask from
# there too, not from its own namespace (docs/harness.md, "Netlink"). Compared with native, in
# exclusive and in shared mode, for a namespace the program makes (unshare) and one it enters
# (setns). (Not as nobody: the guest refuses unprivileged user namespaces, EPERM; the tracer's
# privilege plays no part, as the program's own thread makes the socket.)
#
# The mode is the whole guest's, and the kernel changes it only while no other network
# namespace exists: the case runs alone (RUN_SERIAL) and puts shared mode back on exit.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
trace=$(mktemp)

# set_mode MODE: the RDMA netns mode, retried while a namespace of an earlier test is still
# being dismantled (EBUSY).
set_mode() {
  local i
  for ((i = 0; i < 60; i++)); do
    rdma system set netns "$1" 2>/dev/null && [[ $(rdma system) == *"netns $1"* ]] && return 0
    sleep 0.5
  done
  echo "harness_netns: cannot set RDMA netns mode $1: $(rdma system set netns "$1" 2>&1)" >&2
  return 1
}
cleanup() {
  ip netns delete rxp_netns_case 2>/dev/null || true
  set_mode shared || true
  rm -f "$trace"
}
trap cleanup EXIT

# fail MESSAGE: the case fails, saying why.
fail() { echo "harness_netns: $*" >&2; exit 1; }
# same LABEL EXPECT CMD...: CMD natively and under the harness; outputs and exit statuses must
# be identical and contain EXPECT (with EXPECT "", the devices must be absent: neither may name
# one). The proxied run's trace is left in $trace.
devices_re="$RXP_NODE0_DEV|$RXP_NODE1_DEV"
same() {
  local label=$1 expect=$2 native proxied
  shift 2
  native=$("$@" 2>&1; echo "exit $?")
  proxied=$("$RXP_RDMAPROXY" run --trace="$trace" -- "$@" 2>&1; echo "exit $?")
  rxp_diff "$native" "$proxied" || fail "$label differs from native (above: < native, > proxied)"
  if [[ -n $expect ]]; then
    grep -qE "$expect" <<<"$native" || fail "$label: no '$expect' in: $native"
  elif grep -qE "$devices_re" <<<"$native"; then
    fail "$label: devices listed where none belong: $native"
  fi
  echo "harness_netns: $label: as natively ($(grep -cE "$devices_re" <<<"$native") device lines)"
}
# Whether the last proxied run asked the host from the program's namespace (its trace line).
asked_from_program_ns() {
  grep -q "the host is asked from the program's net:\[" "$trace" ||
    fail "$1: the trace does not show the host asked from the program's namespace"
}
asked_from_own_ns() {
  ! grep -q "the host is asked from the program's" "$trace" ||
    fail "$1: a program in the harness's namespace made an extra socket"
}

# Shared mode (the default): every namespace sees every device, so an own namespace lists them
# too -- through the socket the program's thread made there.
set_mode shared
same "shared, own netns: ibv_devices" "$devices_re" unshare -n ibv_devices
asked_from_program_ns "shared, own netns"
same "shared, harness's netns: ibv_devices" "$devices_re" ibv_devices
asked_from_own_ns "shared, harness's netns"

set_mode exclusive
same "exclusive, harness's netns: ibv_devices" "$devices_re" ibv_devices
same "exclusive, own netns: ibv_devices" "" unshare -n ibv_devices
asked_from_program_ns "exclusive, own netns"
same "exclusive, own netns: rdma dev" "" unshare -n rdma dev
same "exclusive, own netns: ibv_devinfo" "" unshare -n ibv_devinfo
# A namespace the program enters with setns() rather than makes (ip netns exec).
ip netns add rxp_netns_case
same "exclusive, a named netns entered with setns: ibv_devices" "" \
  ip netns exec rxp_netns_case ibv_devices
asked_from_program_ns "exclusive, setns"
ip netns delete rxp_netns_case
set_mode shared
echo "harness_netns: device lists as natively in both modes"
