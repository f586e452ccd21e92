#!/bin/bash
# The harness as an unprivileged user (nobody): no capability is needed to trace one's own
# children and install the filter.
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
echo "unprivileged: ibv_devinfo identical, rc_pingpong passed"
