#!/bin/bash
# demo_ib_write_bw.sh BUILD_DIR: the main job's demonstration (scripts/demo.sh). perftest's
# ib_write_bw between the test bed's two nodes, natively and then with both sides under
# `rdmaproxy run`; the client's --trace shows every command the proxy decoded (the setup:
# context, PD, MR, CQ, QP, the modify to RTS; then one POST_SEND doorbell per post, which
# soft-RoCE rings with a write()), and the bandwidth is printed next to the native one.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: demo_ib_write_bw.sh BUILD_DIR}
rdmaproxy=$build/tools/rdmaproxy
duration=${DURATION:-3}
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT

echo "== native: ib_write_bw $RXP_NODE0_DEV -> $RXP_NODE1_DEV, ${duration}s"
rxp_perftest_pair tcp:18515 \
  ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP"
native=$(rxp_perftest_average "$RXP_CLIENT_OUT")

echo "== under rdmaproxy run --trace (both sides proxied)"
# (rxp_pair splits its arguments at the first "--": the proxied commands go through functions.)
server_proxied() { "$rdmaproxy" run -- "$@"; }
client_proxied() { "$rdmaproxy" run --trace="$trace" --stats -- "$@"; }
rxp_perftest_pair tcp:18515 \
  server_proxied ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  client_proxied ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP"
proxied=$(rxp_perftest_average "$RXP_CLIENT_OUT")

echo "-- the client's decoded commands (setup; the POST_SEND doorbells are counted below):"
grep -E '^rdmaproxy: (ioctl|write)\(' "$trace" | grep -v 'POST_SEND' | sed 's/^rdmaproxy: /  /' |
  cut -c1-200
echo "  ... and $(grep -c 'POST_SEND' "$trace") POST_SEND doorbells (write() on the uverbs fd)"
grep -E '^rdmaproxy: (stops|proxied)' <<<"$RXP_CLIENT_OUT" | sed 's/^/  /'

[[ -n "$native" && -n "$proxied" ]] || { echo "no bandwidth row" >&2; exit 1; }
awk -v n="$native" -v p="$proxied" 'BEGIN {
  printf "ib_write_bw (65536-byte messages): native %.2f MB/s, under rdmaproxy %.2f MB/s (%.2fx)\n",
         n, p, p / n
  exit !(p > 0) }'
