#!/bin/bash
# rping over rdma_cm: node0 pings node1 COUNT times with data verification (-V).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
count=${COUNT:-10}
rxp_pair cm \
  rping -s -a "$RXP_NODE1_IP" -C "$count" -v -V -- \
  rping -c -a "$RXP_NODE1_IP" -C "$count" -v -V
n=$(grep -c '^ping data: rdma-ping-' <<<"$RXP_CLIENT_OUT" || true)
echo "rping: $n of $count pings verified"
((n == count)) || { echo "expected $count pings" >&2; exit 1; }
