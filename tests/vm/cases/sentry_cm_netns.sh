#!/bin/bash
# rdma_cm in sentry mode, in the sandbox's network namespace (rxp_config_set_rdma_cm_netns):
# the kernel puts an rdma_cm id in the namespace of the thread that creates it, so the same
# resolve of node1's address must succeed or fail by the namespace configured, not by the one
# the runtime's calling thread is in.
#   1. no namespace configured, caller in the test bed's namespace: resolves;
#   2. an empty namespace configured (no route to node1), caller in the test bed's: ENETUNREACH;
#   3. the caller in an empty namespace, nothing configured: ENETUNREACH (the reference);
#   4. the caller in an empty namespace, the test bed's configured: resolves.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: sentry_cm_netns.sh BUILD_DIR}
bin=$build/tests/embedding/rxp_sentry_cm_netns
testbed_ns=/proc/$$/ns/net

# An empty network namespace, held open by a sleeper inside it.
unshare -n sleep 600 &
holder=$!
trap 'kill "$holder" 2>/dev/null' EXIT
for _ in $(seq 50); do
  [[ $(readlink "/proc/$holder/ns/net") != "$(readlink "$testbed_ns")" ]] && break
  sleep 0.1
done
empty_ns=/proc/$holder/ns/net
[[ $(readlink "$empty_ns") != "$(readlink "$testbed_ns")" ]] || { echo "no empty namespace" >&2; exit 1; }

check() {  # check WHAT EXPECT CMD...
  local what=$1 expect=$2 out; shift 2
  out=$("$@" 2>&1) || { echo "$what: exit $?: $out" >&2; return 1; }
  echo "$what: $out"
  rxp_expect "$out" "$expect" "$what"
}
check "caller in the test bed's namespace" '^resolve: ok, event ADDR_RESOLVED$' \
  "$bin" "$RXP_NODE1_IP"
check "empty namespace configured" '^resolve: ENETUNREACH$' \
  "$bin" "$RXP_NODE1_IP" "$empty_ns"
check "caller in an empty namespace" '^resolve: ENETUNREACH$' \
  nsenter --net="$empty_ns" "$bin" "$RXP_NODE1_IP"
check "caller in an empty namespace, the test bed's configured" '^resolve: ok, event ADDR_RESOLVED$' \
  nsenter --net="$empty_ns" "$bin" "$RXP_NODE1_IP" "$testbed_ns"
echo "sentry_cm_netns: PASS"
