#!/bin/bash
# rping over rdma_cm with both sides under the harness: /dev/infiniband/rdma_cm is proxied too.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
count=${COUNT:-10}
RXP_RUN_OPTS=(--stats)
rxp_pair cm \
  rxp_run_default rping -s -a "$RXP_NODE1_IP" -C "$count" -v -V -- \
  rxp_run_default rping -c -a "$RXP_NODE1_IP" -C "$count" -v -V
n=$(grep -c '^ping data: rdma-ping-' <<<"$RXP_CLIENT_OUT" || true)
echo "rping under the harness: $n of $count pings verified"
((n == count)) || { echo "expected $count pings" >&2; exit 1; }
rxp_expect "$RXP_CLIENT_OUT" "proxied opens [2-9]" "the rdma_cm and uverbs opens proxied"
