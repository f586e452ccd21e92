#!/bin/bash
# sysfs_ibv_devinfo.sh BUILD_DIR: libibverbs, denied RDMA netlink, finds and uses the guest's
# rxe devices through a synthesized /sys only.
#
# The guest's live /sys is snapshotted and rendered by rdmaproxy; ibv_devinfo then runs with
# NETLINK_RDMA refused (tests/tools/deny_netlink_rdma: libibverbs must take its sysfs
# fallback) and SYSFS_PATH pointing at the rendered tree, and must print exactly what it
# prints natively. Controls prove the listing really came from the tree: a tree holding only
# rxe1 lists only rxe1 (natively, netlink lists both), and a missing tree lists nothing.
# When the ptrace harness lands this runs as `rdmaproxy run --sysfs` instead (docs/sysfs.md).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: sysfs_ibv_devinfo.sh BUILD_DIR}
rxp=$build/tools/rdmaproxy
deny=$build/tests/tools/deny_netlink_rdma
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$rxp" sysfs snapshot -o "$tmp/host.json"
"$rxp" sysfs render "$tmp/host.json" -o "$tmp/sys"
"$rxp" sysfs render "$tmp/host.json" --devices "$RXP_NODE1_DEV" -o "$tmp/sys-node1"

# The filter itself: NETLINK_RDMA refused, other netlink families still open.
"$deny" --check true
if "$deny" rdma dev show >"$tmp/rdma.out" 2>&1; then
  echo "iproute2 'rdma' still reached RDMA netlink under deny_netlink_rdma" >&2; exit 1
fi

# One block per device, sorted by name: the device order is discovery order (netlink: by
# index; sysfs: readdir order of class/infiniband_verbs), which need not agree.
by_device() {
  awk '/^hca_id:/ { name = $2 } { print name "\t" NR "\t" $0 }' | sort -k1,1 -k2,2n | cut -f3-
}
ibv_devinfo -v | by_device >"$tmp/native.txt"
SYSFS_PATH=$tmp/sys "$deny" ibv_devinfo -v | by_device >"$tmp/fallback.txt"
if ! diff -u "$tmp/native.txt" "$tmp/fallback.txt"; then
  echo "ibv_devinfo -v differs between netlink discovery and the synthesized sysfs" >&2; exit 1
fi
for dev in "$RXP_NODE0_DEV" "$RXP_NODE1_DEV"; do
  rxp_expect "$(cat "$tmp/fallback.txt")" "hca_id:[[:space:]]+$dev\$" "device $dev from the synthesized tree"
done
[[ $(grep -c "state:.*PORT_ACTIVE" "$tmp/fallback.txt") -eq 2 ]] || { echo "expected 2 active ports" >&2; exit 1; }
echo "ibv_devinfo -v: identical natively and through the synthesized sysfs ($(wc -l <"$tmp/fallback.txt") lines)"

# Only rxe1 in the tree: only rxe1 listed, with the same attributes as natively.
only=$(SYSFS_PATH=$tmp/sys-node1 "$deny" ibv_devinfo -l)
echo "$only"
rxp_expect "$only" "^1 HCA found" "one device in the rxe1-only tree"
rxp_expect "$only" "$RXP_NODE1_DEV" "$RXP_NODE1_DEV in the rxe1-only tree"
ibv_devinfo -v -d "$RXP_NODE1_DEV" >"$tmp/native1.txt"  # (the guest has no /dev/fd for <(...))
SYSFS_PATH=$tmp/sys-node1 "$deny" ibv_devinfo -v -d "$RXP_NODE1_DEV" >"$tmp/fallback1.txt"
diff -u "$tmp/native1.txt" "$tmp/fallback1.txt"
# Controls: netlink (not denied) ignores SYSFS_PATH's device list; no tree, no devices.
both=$(SYSFS_PATH=$tmp/sys-node1 ibv_devinfo -l)
rxp_expect "$both" "^2 HCAs found" "netlink discovery of both devices"
if SYSFS_PATH=$tmp/nonexistent "$deny" ibv_devinfo -l >"$tmp/none.txt" 2>&1 && grep -q rxe "$tmp/none.txt"; then
  echo "devices listed without a sysfs tree: netlink was not denied" >&2; exit 1
fi
echo "controls: netlink lists both devices; denied netlink and no tree list none"

# The checked-in fixture (tests/data/sysfs/vm_rxe.snapshot.json) still matches this test bed.
python3 - "$tmp/host.json" tests/data/sysfs/vm_rxe.snapshot.json <<'PY'
import json, sys
def shape(path):
    s = json.load(open(path))
    return [(d["name"], d["pci"], d["uverbs"]["name"], d["uverbs"]["dev"],
             [(p["port"], p["attrs"].get("link_layer"), p["gid_table_len"], [(g["index"], g["type"]) for g in p["gids"]])
              for p in d["ports"]]) for d in s["rdma_devices"]], sorted(n["name"] for n in s["netdevs"])
live, fixture = shape(sys.argv[1]), shape(sys.argv[2])
if live != fixture:
    sys.exit("vm_rxe fixture is stale: live %s, fixture %s; re-capture with tests/data/sysfs/capture-vm-rxe.sh" % (live, fixture))
print("the vm_rxe fixture matches the live test bed")
PY
