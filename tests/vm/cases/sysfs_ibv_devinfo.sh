#!/bin/bash
# sysfs_ibv_devinfo.sh BUILD_DIR: libibverbs under `rdmaproxy run --sysfs` finds and uses the
# guest's rxe devices through the synthesized /sys alone.
#
# The guest's live /sys is snapshotted by rdmaproxy; ibv_devinfo then runs under the harness,
# which serves all of /sys from the tree synthesized from the snapshot, once with NETLINK_RDMA
# refused (--refuse-netlink: libibverbs takes its sysfs fallback at the socket) and once with
# the default filtered socket (the harness answers the device list about the allowed devices;
# every attribute still comes from /sys). Its output must equal native `ibv_devinfo -v`,
# devices in the same order. Controls prove the listing came from the tree: a GUID changed in
# the snapshot
# shows up in `ibv_devices`, and a tree holding only rxe1 lists only rxe1. Snapshots that do not
# describe the run's devices are refused before the program starts (status 2, one line).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: sysfs_ibv_devinfo.sh BUILD_DIR}
rxp=$build/tools/rdmaproxy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$rxp" sysfs snapshot -o "$tmp/host.json"

# Devices in discovery order: natively netlink's index order; under the harness the readdir
# order of class/infiniband_verbs, which it keeps to the same order (docs/harness.md "Device
# order").
ibv_devinfo -v >"$tmp/native.txt"
"$rxp" run --sysfs "$tmp/host.json" --refuse-netlink -- ibv_devinfo -v >"$tmp/proxied.txt"
if ! diff -u "$tmp/native.txt" "$tmp/proxied.txt"; then
  echo "ibv_devinfo -v differs between native and rdmaproxy run --sysfs --refuse-netlink" >&2; exit 1
fi
"$rxp" run --sysfs "$tmp/host.json" -- ibv_devinfo -v >"$tmp/filtered.txt"
if ! diff -u "$tmp/native.txt" "$tmp/filtered.txt"; then
  echo "ibv_devinfo -v differs between native and rdmaproxy run --sysfs" >&2; exit 1
fi
for dev in "$RXP_NODE0_DEV" "$RXP_NODE1_DEV"; do
  rxp_expect "$(cat "$tmp/proxied.txt")" "hca_id:[[:space:]]+$dev\$" "device $dev from the synthesized tree"
done
[[ $(grep -c "state:.*PORT_ACTIVE" "$tmp/proxied.txt") -eq 2 ]] || { echo "expected 2 active ports" >&2; exit 1; }
echo "ibv_devinfo -v: identical natively and under rdmaproxy run --sysfs, netlink refused or filtered ($(wc -l <"$tmp/proxied.txt") lines)"

# The same from a snapshot the harness takes itself at start.
"$rxp" run --sysfs-from-host -- ibv_devinfo -v >"$tmp/from-host.txt"
diff -u "$tmp/native.txt" "$tmp/from-host.txt"
echo "ibv_devinfo -v: identical under rdmaproxy run --sysfs-from-host"

# Control: the device list is the tree's. A node GUID changed in the snapshot is what
# ibv_devices prints under the harness with netlink refused (libibverbs' sysfs fallback reads
# class/infiniband/*/node_guid), while the host still says the real one. With netlink answered,
# libibverbs takes the GUID from RDMA_NLDEV_ATTR_NODE_GUID: the device's real one, as
# ibv_query_device() says too.
real_guid=$(cat "/sys/class/infiniband/$RXP_NODE1_DEV/node_guid")
python3 - "$tmp/host.json" "$tmp/doctored.json" "$RXP_NODE1_DEV" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for d in s["rdma_devices"]:
    if d["name"] == sys.argv[3]:
        d["attrs"]["node_guid"] = "0123:4567:89ab:cdef"
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
doctored=$("$rxp" run --sysfs "$tmp/doctored.json" --refuse-netlink -- ibv_devices)
echo "$doctored"
rxp_expect "$doctored" "$RXP_NODE1_DEV[[:space:]]+0123456789abcdef" "the snapshot's GUID for $RXP_NODE1_DEV"
rxp_expect "$(ibv_devices)" "$RXP_NODE1_DEV[[:space:]]+${real_guid//:/}" "the real GUID natively"
rxp_expect "$("$rxp" run --sysfs "$tmp/doctored.json" -- ibv_devices)" \
  "$RXP_NODE1_DEV[[:space:]]+${real_guid//:/}" "the real GUID from the netlink answer"

# Only rxe1 allowed: only rxe1 in the tree, with the same attributes as natively.
only=$("$rxp" run --sysfs "$tmp/host.json" --devices "$RXP_NODE1_DEV" -- ibv_devinfo -l)
echo "$only"
rxp_expect "$only" "^1 HCA found" "one device in the rxe1-only tree"
rxp_expect "$only" "$RXP_NODE1_DEV" "$RXP_NODE1_DEV in the rxe1-only tree"
classes=$("$rxp" run --sysfs "$tmp/host.json" --devices "$RXP_NODE1_DEV" -- ls /sys/class/infiniband | tr '\n' ' ')
[[ $classes == "$RXP_NODE1_DEV " ]] || { echo "class/infiniband in the rxe1-only tree: $classes" >&2; exit 1; }
ibv_devinfo -v -d "$RXP_NODE1_DEV" >"$tmp/native1.txt"  # (the guest has no /dev/fd for <(...))
"$rxp" run --sysfs "$tmp/host.json" --devices "$RXP_NODE1_DEV" -- ibv_devinfo -v -d "$RXP_NODE1_DEV" >"$tmp/proxied1.txt"
diff -u "$tmp/native1.txt" "$tmp/proxied1.txt"
echo "a tree with only $RXP_NODE1_DEV lists only $RXP_NODE1_DEV, attributes as natively"

# Refused before the program starts, with status 2 and one line: a device the snapshot lacks,
# a snapshot that gives the device another node number (stale), and one that does not parse.
# refused WHAT PATTERN RUN-OPTIONS...: the run must print PATTERN and not start the program.
refused() {
  local what=$1 pattern=$2 rc=0; shift 2
  "$rxp" run "$@" -- touch "$tmp/started" >"$tmp/refused.out" 2>&1 || rc=$?
  cat "$tmp/refused.out"
  [[ $rc -eq 2 ]] || { echo "$what: exit status $rc, expected 2" >&2; exit 1; }
  [[ $(wc -l <"$tmp/refused.out") -eq 1 ]] || { echo "$what: more than one line" >&2; exit 1; }
  rxp_expect "$(cat "$tmp/refused.out")" "$pattern" "$what"
  [[ ! -e $tmp/started ]] || { echo "$what: the program ran" >&2; exit 1; }
}
"$rxp" sysfs snapshot --devices "$RXP_NODE0_DEV" -o "$tmp/node0.json"
refused "a device the snapshot lacks" "^rdmaproxy: --sysfs .*: ENOENT: the snapshot has no RDMA device $RXP_NODE1_DEV" \
  --sysfs "$tmp/node0.json" --devices "$RXP_NODE1_DEV"
python3 - "$tmp/host.json" "$tmp/stale.json" "$RXP_NODE1_DEV" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for d in s["rdma_devices"]:
    if d["name"] == sys.argv[3]:
        major, minor = d["uverbs"]["dev"].split(":")
        d["uverbs"]["dev"] = "%s:%d" % (major, int(minor) + 7)
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
refused "a stale snapshot" "ESTALE: the snapshot's $RXP_NODE1_DEV is uverbs[0-9]+ \([0-9]+:[0-9]+\), but on this host" \
  --sysfs "$tmp/stale.json"
echo '{"schema": "rdmaproxy-sysfs-snapshot", "version": 1, "pci_functions": [' >"$tmp/broken.json"
refused "a snapshot that does not parse" "^rdmaproxy: --sysfs: EINVAL: $tmp/broken.json: snapshot: not valid JSON" --sysfs "$tmp/broken.json"
refused "a missing snapshot" "^rdmaproxy: --sysfs: ENOENT: open $tmp/none.json" --sysfs "$tmp/none.json"
# The control for `refused`: the same run with a good snapshot starts the program.
"$rxp" run --sysfs "$tmp/host.json" -- touch "$tmp/started"
[[ -e $tmp/started ]]
echo "bad snapshots refused before the program starts"

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
