#!/bin/bash
# `ibv_devinfo -v` under the harness prints exactly what it prints natively (per device).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
native=$(ibv_devinfo -v)
proxied=$(rxp_run --stats -- ibv_devinfo -v)
echo "$proxied"
if ! rxp_diff "$(rxp_devinfo_blocks "$native")" "$(rxp_devinfo_blocks "$proxied")"; then
  echo "ibv_devinfo -v differs under the harness" >&2
  exit 1
fi
# Each device alone, by name, too.
for dev in "$RXP_NODE0_DEV" "$RXP_NODE1_DEV"; do
  rxp_diff "$(ibv_devinfo -v -d "$dev")" "$(rxp_run -- ibv_devinfo -v -d "$dev")"
done
echo "ibv_devinfo -v: identical natively and under the harness"
