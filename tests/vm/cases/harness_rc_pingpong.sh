#!/bin/bash
# ibv_rc_pingpong from node0 to node1 with both sides under the harness; the traffic crosses
# the veth pair.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
iters=${ITERS:-200}
RXP_RUN_OPTS=(--stats)
before=$(rxp_link_packets "$RXP_NODE0_NETDEV")
rxp_pair tcp:18515 \
  rxp_run_default ibv_rc_pingpong -d "$RXP_NODE1_DEV" -g "$RXP_NODE1_GID" -n "$iters" -- \
  rxp_run_default ibv_rc_pingpong -d "$RXP_NODE0_DEV" -g "$RXP_NODE0_GID" -n "$iters" "$RXP_NODE1_IP"
after=$(rxp_link_packets "$RXP_NODE0_NETDEV")
echo "veth packets sent by node0: $((after - before))"
((after - before >= iters)) || { echo "traffic did not cross $RXP_NODE0_NETDEV" >&2; exit 1; }
rxp_expect "$RXP_CLIENT_OUT" "$iters iters in" "the client's iteration summary"
rxp_expect "$RXP_SERVER_OUT" "$iters iters in" "the server's iteration summary"
rxp_expect "$RXP_CLIENT_OUT" "proxied opens 1, closes 1" "one proxied uverbs open and close in the client"
