#!/bin/bash
# Both rxe devices are listed, with an active port and the node's IPv4 GID.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
out=$(ibv_devinfo)
echo "$out"
for dev in "$RXP_NODE0_DEV" "$RXP_NODE1_DEV"; do
  rxp_expect "$out" "hca_id:[[:space:]]+$dev\$" "device $dev"
done
[[ $(grep -c 'PORT_ACTIVE' <<<"$out") -eq 2 ]] || { echo "expected 2 active ports" >&2; exit 1; }
ibv_devices
for n in 0 1; do
  dev_var=RXP_NODE${n}_DEV; gid_var=RXP_NODE${n}_GID; ip_var=RXP_NODE${n}_IP
  v=$(ibv_devinfo -v -d "${!dev_var}")
  rxp_expect "$v" "GID\[ *${!gid_var}\]:[[:space:]]+::ffff:${!ip_var}, RoCE v2" "${!dev_var}'s IPv4 GID"
done
