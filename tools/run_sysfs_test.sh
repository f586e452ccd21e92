#!/bin/bash
# run_sysfs_test.sh RDMAPROXY SOURCE_ROOT: `rdmaproxy run --sysfs` on the build host (no RDMA
# devices, so the run allows none): /sys is the tree synthesized from the DGX H100 fixture
# narrowed to no device -- its GPUs and NVSwitches with their PCI ancestry, none of its NICs,
# none of this host's devices -- the passthrough CPU directory is this host's, bad snapshots
# are refused with status 2 before the program starts, and the private directory is removed
# after a run, a refused start and a SIGTERM. (Selection of real devices: the VM tests.)
set -euo pipefail
rxp=${1:?usage: run_sysfs_test.sh RDMAPROXY SOURCE_ROOT}
src=${2:?usage: run_sysfs_test.sh RDMAPROXY SOURCE_ROOT}
fixture=$src/tests/data/sysfs/dgx_h100.snapshot.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir "$TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
views_left() { find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l; }
run() { "$rxp" run --sysfs "$fixture" -- "$@"; }

# The PCI functions the program sees are the fixture's GPUs, NVSwitches and their bridges.
want=$(python3 - "$fixture" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
fns = {f["bdf"]: f for f in s["pci_functions"]}
def keep(f):
    cls = int(f["attrs"]["class"], 16)
    return cls >> 8 in (0x0300, 0x0302) or (cls >> 8 == 0x0680 and f["attrs"].get("vendor") == "0x10de")
kept = set()
for f in s["pci_functions"]:
    if keep(f):
        b = f["bdf"]
        while b and b not in kept:
            kept.add(b)
            b = fns[b]["parent"]
print("\n".join(sorted(kept)))
PY
)
got=$(run ls /sys/bus/pci/devices)
[[ $got == "$want" ]] || { diff <(echo "$want") <(echo "$got") >&2 || true; fail "PCI functions under the harness"; }
nics=$(python3 -c 'import json,sys; print(" ".join(d["pci"] for d in json.load(open(sys.argv[1]))["rdma_devices"]))' "$fixture")
for nic in $nics; do
  grep -qx "$nic" <<<"$got" && fail "NIC $nic of a device the run does not allow is visible"
done
echo "PCI: $(wc -l <<<"$got") functions (GPUs, NVSwitches, bridges); none of the $(wc -w <<<"$nics") NICs"
[[ -z $(run ls /sys/class/infiniband /sys/class/infiniband_verbs 2>/dev/null || true) ]] || fail "RDMA devices listed"
# A GPU's canonical path (its bridges) and NUMA node are the fixture's.
read -r gpu gpu_path gpu_numa < <(python3 - "$fixture" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
fns = {f["bdf"]: f for f in s["pci_functions"]}
gpu = next(f for f in s["pci_functions"] if f["attrs"]["class"] == "0x030200")
chain, b = [], gpu["bdf"]
while b:
    chain.insert(0, b)
    b = fns[b]["parent"]
print(gpu["bdf"], "/sys/devices/pci%s/%s" % (chain[0][:7], "/".join(chain)), gpu["attrs"]["numa_node"])
PY
)
[[ $(run realpath "/sys/bus/pci/devices/$gpu") == "$gpu_path" ]] || fail "realpath of GPU $gpu: $(run realpath "/sys/bus/pci/devices/$gpu")"
[[ $(run cat "/sys/bus/pci/devices/$gpu/numa_node") == "$gpu_numa" ]] || fail "the GPU's NUMA node"
# Nothing of this host's own /sys/devices shows through (its PCI functions, if any, are not
# the fixture's), and the passthrough CPU directory is this host's.
host_only=$(ls /sys/bus/pci/devices 2>/dev/null | grep -vxF "$want" || true)
seen=$(run sh -c 'for b; do test -e "/sys/bus/pci/devices/$b" && echo "$b"; done; true' sh $host_only)
[[ -z $seen ]] || fail "host PCI functions are visible: $seen"
echo "none of this host's $(wc -w <<<"$host_only") other PCI functions is visible"
[[ $(run cat /sys/devices/system/cpu/online) == "$(cat /sys/devices/system/cpu/online)" ]] || fail "cpu/online"
[[ $(run cat /sys/devices/system/node/online) == 0-1 ]] || fail "the fixture's NUMA nodes"
# A node's size: meminfo's MemTotal line (the fixture's 1056457216 kB), as `sysfs show` says,
# then its free memory at capture time and MemUsed, their difference (libnuma's
# numa_node_size64() warns without MemFree).
[[ $(run head -n 1 /sys/devices/system/node/node1/meminfo) == "Node 1 MemTotal:       1056457216 kB" ]] ||
  fail "the fixture's NUMA node size"
[[ $(run sed -n 2,3p /sys/devices/system/node/node1/meminfo | tr -s ' ') == "Node 1 MemFree: 1000000000 kB
Node 1 MemUsed: 56457216 kB" ]] || fail "the fixture's NUMA node free memory"
"$rxp" sysfs show "$fixture" | grep -qxF "  node1: cpus 56-111,168-223, 1007.5 GiB (distance 21 10)" ||
  fail "sysfs show: NUMA node 1"
((0 == $(views_left))) || fail "a private tree was left after a run"

# --sysfs-from-host: this host's own devices (none) and topology, the same CPU directory.
"$rxp" run --sysfs-from-host -- ls /sys/devices >/dev/null
[[ $("$rxp" run --sysfs-from-host -- cat /sys/devices/system/cpu/online) == "$(cat /sys/devices/system/cpu/online)" ]] ||
  fail "cpu/online with --sysfs-from-host"
((0 == $(views_left))) || fail "a private tree was left after --sysfs-from-host"

# Refused before the program starts: status 2, one line, no program, no directory left.
refused() {  # refused WHAT PATTERN SNAPSHOT
  local rc=0
  "$rxp" run --sysfs "$3" -- touch "$work/started" >"$work/out" 2>&1 || rc=$?
  [[ $rc -eq 2 ]] || fail "$1: status $rc, expected 2: $(cat "$work/out")"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "$1: not one line: $(cat "$work/out")"
  grep -qE "$2" "$work/out" || fail "$1: '$(cat "$work/out")' does not match /$2/"
  [[ ! -e $work/started ]] || fail "$1: the program ran"
  ((0 == $(views_left))) || fail "$1: a private tree was left"
  echo "refused ($1): $(cat "$work/out")"
}
refused "missing" "^rdmaproxy: --sysfs: ENOENT: open $work/none.json: " "$work/none.json"
refused "empty name" "^rdmaproxy: --sysfs: empty value" ""
refused "a directory" "^rdmaproxy: --sysfs: EINVAL: $work is not a regular file" "$work"
head -c 300 "$fixture" >"$work/truncated.json"
refused "truncated" "^rdmaproxy: --sysfs: EINVAL: $work/truncated.json: snapshot: not valid JSON" "$work/truncated.json"
sed 's/"version": 1/"version": 9/' "$fixture" >"$work/v9.json"
refused "version 9" "EPROTONOSUPPORT" "$work/v9.json"
# The control for `refused`: the same program with a good snapshot runs.
"$rxp" run --sysfs "$fixture" -- touch "$work/started"
[[ -e $work/started ]] || fail "the program did not run with a good snapshot"
# The /sys sources exclude each other (a usage error from the option parser).
if "$rxp" run --sysfs "$fixture" --sysfs-from-host -- true 2>/dev/null; then fail "--sysfs with --sysfs-from-host"; fi

# SIGTERM to the harness: forwarded, the program dies of it, so does the harness, after it
# removed its directory.
"$rxp" run --sysfs "$fixture" -- sleep 60 &
harness=$!
for ((i = 0; i < 200; i++)); do
  [[ -n $(pgrep -P "$harness" -x sleep) ]] && break
  sleep 0.05
done
[[ -n $(pgrep -P "$harness" -x sleep) ]] || fail "the program did not start"
((1 == $(views_left))) || fail "no private tree while the program runs"
kill -TERM "$harness"
rc=0
wait "$harness" || rc=$?
((rc == 128 + 15)) || fail "status $rc after SIGTERM"
((0 == $(views_left))) || fail "a private tree was left after SIGTERM"
echo "private trees removed after runs, refused starts and SIGTERM"

# --sysfs-dir: a tree rendered beforehand, named by an absolute or a relative path (from the
# caller's directory), is served as /sys.
"$rxp" sysfs render "$fixture" -o "$work/rendered" >/dev/null 2>&1 || fail "render the fixture"
want_gpu=$(cat "$work/rendered/bus/pci/devices/$gpu/numa_node")
node_attr=/sys/bus/pci/devices/$gpu/numa_node
[[ $("$rxp" run --sysfs-dir "$work/rendered" -- cat "$node_attr") == "$want_gpu" ]] ||
  fail "--sysfs-dir with an absolute path"
[[ $(cd "$work" && "$rxp" run --sysfs-dir rendered/ -- cat "$node_attr") == "$want_gpu" ]] ||
  fail "--sysfs-dir with a relative path"
echo "--sysfs-dir serves the rendered tree, by absolute and by relative path"
