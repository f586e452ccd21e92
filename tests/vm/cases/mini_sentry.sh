#!/bin/bash
# The example embedder (tests/embedding/mini_sentry.cc): a verbs workload driven through the
# C API in sentry mode, app memory mapped twice and app fd numbers of its own, between node0's
# and node1's devices. Then the same with the runtime's translation turned off, which must
# fail: the host kernel cannot pin the app's addresses (REG_MR: EFAULT). The app's /sys is
# served from a snapshot of the guest through rxp_sysfs_*.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: mini_sentry.sh BUILD_DIR}
bin=$build/tests/embedding/rxp_mini_sentry

# The app's /sys comes from a snapshot of this guest (rxp_sysfs_*).
snapshot=$(mktemp --suffix=.json)
trap 'rm -f "$snapshot"' EXIT
"$build/tools/rdmaproxy" sysfs snapshot -o "$snapshot"

out=$("$bin" --trace --sysfs "$snapshot" "$RXP_NODE0_DEV" "$RXP_NODE1_DEV" 2>&1) || { echo "$out"; exit 1; }
grep -v '^trace|' <<<"$out"
echo "(trace: $(grep -c '^trace|' <<<"$out") decoded commands; first lines:)"
grep -m 8 '^trace|' <<<"$out"
rxp_expect "$out" "^ok sysfs: uverbs7 -> $RXP_NODE0_DEV .*, uverbs3 -> $RXP_NODE1_DEV " "the app's /sys"
rxp_expect "$out" '^ok rdma_write: 4096 bytes .* data checked through the app view' "the RDMA WRITE"
rxp_expect "$out" '^ok send: .* completion event on app fd' "the SEND and its completion event"
rxp_expect "$out" '^ok async_event: send queue drained on app fd' "the async event (SQ drained)"
rxp_expect "$out" '^mini-sentry: PASS$' "a clean pass"

echo "--- translation off: must fail"
if off=$("$bin" --no-translation "$RXP_NODE0_DEV" "$RXP_NODE1_DEV" 2>&1); then
  echo "$off"
  echo "the mini-sentry passed without translation: the test cannot tell translation from none" >&2
  exit 1
fi
echo "$off" | tail -n 3
rxp_expect "$off" '^FAIL reg_mr: EFAULT' "REG_MR refused by the kernel without translation"
