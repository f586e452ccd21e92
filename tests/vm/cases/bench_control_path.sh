#!/bin/bash
# bench_control_path.sh BUILD_DIR: issue 4's benchmark (b) -- a verbs control-path loop (open,
# alloc_pd, reg_mr, create_cq, create_qp, modify to RTS, destroy) natively and under
# `rdmaproxy run` in the same boot, as loops/s and their ratio (target: proxied within 3x).
# Prints figures; asserts nothing about timing.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: bench_control_path.sh BUILD_DIR}
seconds=${SECONDS_PER_RUN:-5}
loop=$build/tests/bench/rxp_verbs_loop
rate() { sed -n 's/.*= \([0-9.]*\) loops\/s/\1/p' <<<"$1"; }
native=$("$loop" "$RXP_NODE0_DEV" "$RXP_NODE0_GID" "$seconds")
echo "native:  $native"
proxied=$("$build/tools/rdmaproxy" run --stats -- "$loop" "$RXP_NODE0_DEV" "$RXP_NODE0_GID" "$seconds" 2>"$RXP_SHARE/control_path.stats")
echo "proxied: $proxied"
sed 's/^/  /' "$RXP_SHARE/control_path.stats"
awk -v n="$(rate "$native")" -v p="$(rate "$proxied")" 'BEGIN {
  printf "control path: native %.1f loops/s, proxied %.1f loops/s: the proxy takes %.2fx the time (target <= 3x)\n", n, p, n / p
  exit !(n > 0 && p > 0) }'
