#!/bin/bash
# conformance.sh BUILD_DIR CASE [RUN_OPTIONS]: one case of the conformance suite
# (tests/conformance/suite.sh) between the test bed's two nodes; RUN_OPTIONS replace the
# suite's `rdmaproxy run` options (default "--stats").
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
run_opts=()
if (($# > 2)); then run_opts=(--run-opts "$3"); fi
exec "$(dirname "$0")/../../conformance/suite.sh" --build "${1:?BUILD_DIR}" \
  --node0 "$RXP_NODE0_DEV:$RXP_NODE0_GID:$RXP_NODE0_IP" \
  --node1 "$RXP_NODE1_DEV:$RXP_NODE1_GID:$RXP_NODE1_IP" "${run_opts[@]}" "${2:?CASE}"
