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
# perftest calibrates its cycle counter against the clock before it reports, and gives up
# ("Correlation coefficient r^2 < 0.9 ... Can't produce a report") when the emulated CPU is
# descheduled during the calibration, natively or not. Such runs are repeated (up to 3 times);
# any other failure fails the test.
pair() {
  local attempt
  for attempt in 1 2 3; do
    if rxp_pair tcp:18515 "$@"; then return 0; fi
    grep -q "Can't produce a report" <<<"$RXP_CLIENT_OUT$RXP_SERVER_OUT" || return 1
    echo "perftest could not calibrate its clock (attempt $attempt); again"
  done
  return 1
}
pair ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP" >/dev/null
native=$(average "$RXP_CLIENT_OUT")
RXP_RUN_OPTS=(--stats)
pair rxp_run_default ib_write_bw -d "$RXP_NODE1_DEV" -x "$RXP_NODE1_GID" -D "$duration" -- \
  rxp_run_default ib_write_bw -d "$RXP_NODE0_DEV" -x "$RXP_NODE0_GID" -D "$duration" "$RXP_NODE1_IP"
proxied=$(average "$RXP_CLIENT_OUT")
[[ -n "$native" && -n "$proxied" ]] || { echo "no bandwidth row" >&2; exit 1; }
awk -v n="$native" -v p="$proxied" 'BEGIN {
  printf "ib_write_bw: native %.2f MB/s, under the harness %.2f MB/s (%.2fx of native)\n", n, p, p / n
  exit !(p > 0) }'
