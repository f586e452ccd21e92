#!/bin/bash
# perftest ib_write_bw from node0 to node1 (RC, RDMA WRITE); prints the average bandwidth.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
duration=${DURATION:-3}
rxp_pair tcp:18515 \
  ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP"
# The result row: #bytes #iterations BW-peak BW-average MsgRate.
row=$(awk 'NF == 5 && $1 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {r=$0} END {print r}' <<<"$RXP_CLIENT_OUT")
[[ -n "$row" ]] || { echo "no bandwidth row in the client's output" >&2; exit 1; }
read -r bytes iters _ avg _ <<<"$row"
echo "ib_write_bw: ${avg} MB/s average, ${iters} iterations of ${bytes} bytes, $RXP_NODE0_DEV -> $RXP_NODE1_DEV"
awk -v a="$avg" 'BEGIN { exit !(a > 0) }' || { echo "zero bandwidth" >&2; exit 1; }
