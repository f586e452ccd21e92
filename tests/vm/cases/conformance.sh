#!/bin/bash
# conformance.sh BUILD_DIR CASE: one case of the conformance suite (tests/conformance/suite.sh)
# between the test bed's two nodes.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
exec "$(dirname "$0")/../../conformance/suite.sh" --build "${1:?BUILD_DIR}" \
  --node0 "$RXP_NODE0_DEV:$RXP_NODE0_GID:$RXP_NODE0_IP" \
  --node1 "$RXP_NODE1_DEV:$RXP_NODE1_GID:$RXP_NODE1_IP" "${2:?CASE}"
