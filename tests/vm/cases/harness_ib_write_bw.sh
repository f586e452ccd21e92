#!/bin/bash
# perftest ib_write_bw node0 -> node1, natively and then with both sides under the harness, in
# the same boot; prints both averages and their ratio. Under soft-RoCE every post is a write()
# on the uverbs fd (rxe's doorbell), so each one stops in the harness.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
duration=${DURATION:-3}
average() {
  awk 'NF == 5 && $1 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {r = $4} END {print r}' <<<"$1"
}
rxp_pair tcp:18515 \
  ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP" >/dev/null
native=$(average "$RXP_CLIENT_OUT")
RXP_RUN_OPTS=(--stats)
rxp_pair tcp:18515 \
  rxp_run_default ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  rxp_run_default ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP"
proxied=$(average "$RXP_CLIENT_OUT")
[[ -n "$native" && -n "$proxied" ]] || { echo "no bandwidth row" >&2; exit 1; }
awk -v n="$native" -v p="$proxied" 'BEGIN {
  printf "ib_write_bw: native %.2f MB/s, under the harness %.2f MB/s (%.2fx of native)\n", n, p, p / n
  exit !(p > 0) }'
