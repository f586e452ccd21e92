#!/bin/bash
# Loopback on a single node: server and client both on node0's device and address.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
iters=${ITERS:-200}
rxp_pair tcp:18515 \
  ibv_rc_pingpong -d "$RXP_NODE0_DEV" -g "$RXP_NODE0_GID" -n "$iters" -- \
  ibv_rc_pingpong -d "$RXP_NODE0_DEV" -g "$RXP_NODE0_GID" -n "$iters" "$RXP_NODE0_IP"
rxp_expect "$RXP_CLIENT_OUT" "$iters iters in" "the client's iteration summary"
