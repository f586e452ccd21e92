#!/bin/bash
# `rdmaproxy run --sysfs`: a real RC pingpong between the two nodes, both sides proxied, each
# with renamed devices and a /sys synthesized from the guest's snapshot that holds only its own
# device; the program sees no host device outside the selection, not even by walking
# /sys/devices; the private tree is gone after the run, after a refused start and after a
# SIGTERM.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$RXP_RDMAPROXY" sysfs snapshot -o "$dir/host.json"
# Every run keeps its private directory here, so the test can see that it is removed.
export TMPDIR=$dir/tmp
mkdir "$TMPDIR"
views_left() { find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l; }

server_uverbs=uverbs0  # node1's device (host uverbs1) under another name
client_uverbs=uverbs5  # node0's device (host uverbs0) under another name
host_uverbs1=$(basename "$(dirname "$(grep -l "^$RXP_NODE1_DEV\$" /sys/class/infiniband_verbs/uverbs*/ibdev)")")
server_run=("$RXP_RDMAPROXY" run --sysfs "$dir/host.json" --devices "$server_uverbs=$RXP_NODE1_DEV")
client_run=("$RXP_RDMAPROXY" run --sysfs "$dir/host.json" --devices "$client_uverbs=$RXP_NODE0_DEV")

# --- What the server's program sees of /sys. ---------------------------------------------------
classes=$("${server_run[@]}" -- ls /sys/class/infiniband /sys/class/infiniband_verbs /dev/infiniband | tr '\n' ' ')
echo "under the harness: $classes"
[[ $classes == "/dev/infiniband: rdma_cm $server_uverbs  /sys/class/infiniband: $RXP_NODE1_DEV  /sys/class/infiniband_verbs: abi_version $server_uverbs " ]] ||
  { echo "unexpected class or device listing" >&2; exit 1; }
# The tree's uverbs entry and the program's device node agree: same name, same number.
tree_dev=$("${server_run[@]}" -- cat "/sys/class/infiniband_verbs/$server_uverbs/dev")
node_dev=$("${server_run[@]}" -- stat -c '%t:%T' "/dev/infiniband/$server_uverbs")
host_dev=$(stat -c '%t:%T' "/dev/infiniband/$host_uverbs1")
printf -v node_dev_dec '%d:%d' "0x${node_dev%:*}" "0x${node_dev#*:}"
[[ $tree_dev == "$node_dev_dec" && $node_dev == "$host_dev" ]] ||
  { echo "tree dev $tree_dev, node $node_dev ($node_dev_dec), host $host_uverbs1 $host_dev" >&2; exit 1; }
real=$("${server_run[@]}" -- realpath "/sys/class/infiniband_verbs/$server_uverbs")
[[ $real == "/sys/devices/virtual/infiniband_verbs/$server_uverbs" ]] || { echo "realpath: $real" >&2; exit 1; }

# A walk of /sys/devices (the host CPU directory is passed through; it holds no device).
# walk [RUN...]: every path below /sys/devices, then /sys/bus/pci/devices, as the program sees them.
walk() {
  "$@" find /sys/devices -path /sys/devices/system/cpu -prune -o -print
  "$@" find /sys/bus/pci/devices -mindepth 1 2>/dev/null || true
}
walk "${server_run[@]}" -- >"$dir/walk.sandbox"
echo "the program sees $(wc -l <"$dir/walk.sandbox") paths below /sys/devices and /sys/bus/pci/devices"
for want in "/sys/devices/virtual/infiniband/$RXP_NODE1_DEV" \
            "/sys/devices/virtual/infiniband_verbs/$server_uverbs" \
            "/sys/devices/virtual/net/$RXP_NODE1_NETDEV"; do
  grep -qx "$want" "$dir/walk.sandbox" || { echo "the walk misses $want" >&2; exit 1; }
done
# leaks FILE: the lines of a walk that name a host device outside the selection.
leaks() {
  grep -E "/($RXP_NODE0_DEV|$host_uverbs1|$RXP_NODE0_NETDEV)(/|\$)|/sys/devices/pci|/sys/bus/pci/devices/" "$1" || true
}
if [[ -n $(leaks "$dir/walk.sandbox") ]]; then
  echo "the program sees host devices outside its selection:" >&2; leaks "$dir/walk.sandbox" | sed -n 1,10p >&2; exit 1
fi
# Controls: the same walk natively and under the harness without --sysfs (the host's
# /sys/devices behind the device view) finds them, so the check above can fail.
walk env >"$dir/walk.native"
walk "$RXP_RDMAPROXY" run --devices "$server_uverbs=$RXP_NODE1_DEV" -- >"$dir/walk.view"
for f in walk.native walk.view; do
  [[ -n $(leaks "$dir/$f") ]] || { echo "control: $f shows no other host device" >&2; exit 1; }
done
echo "only $RXP_NODE1_DEV ($server_uverbs) is visible; natively and with the device view $(leaks "$dir/walk.view" | wc -l) other paths are"
# The passthrough CPU directory is the host's own.
[[ $("${server_run[@]}" -- cat /sys/devices/system/cpu/online) == "$(cat /sys/devices/system/cpu/online)" ]]
((0 == $(views_left))) || { echo "a private /sys tree was left in $TMPDIR" >&2; ls -l "$TMPDIR" >&2; exit 1; }

# --- Traffic between the nodes, both sides proxied and renamed. --------------------------------
# (rxp_pair splits its arguments on the first "--": the runs go through functions.)
server() { "${server_run[@]}" --stats -- "$@"; }
client() { "${client_run[@]}" --stats -- "$@"; }
before=$(rxp_link_packets "$RXP_NODE0_NETDEV")
rxp_pair tcp:18515 \
  server ibv_rc_pingpong -d "$RXP_NODE1_DEV" -g "$RXP_NODE1_GID" -n 200 -- \
  client ibv_rc_pingpong -d "$RXP_NODE0_DEV" -g "$RXP_NODE0_GID" -n 200 "$RXP_NODE1_IP"
rxp_expect "$RXP_CLIENT_OUT" "200 iters in" "the client's iteration summary"
rxp_expect "$RXP_SERVER_OUT" "200 iters in" "the server's iteration summary"
rxp_expect "$RXP_CLIENT_OUT" "engine: .*forwarded [1-9]" "the client's commands went through the engine"
sent=$(($(rxp_link_packets "$RXP_NODE0_NETDEV") - before))
((sent >= 200)) || { echo "only $sent packets crossed $RXP_NODE0_NETDEV" >&2; exit 1; }
echo "ibv_rc_pingpong: 200 iterations, $sent packets over $RXP_NODE0_NETDEV, $server_uverbs=$RXP_NODE1_DEV <-> $client_uverbs=$RXP_NODE0_DEV"
((0 == $(views_left))) || { echo "a private /sys tree was left after the pingpong" >&2; exit 1; }

# --- The private tree is removed after a refused start and after a signal. --------------------
rc=0
"$RXP_RDMAPROXY" sysfs snapshot --devices "$RXP_NODE0_DEV" -o "$dir/node0.json"
"$RXP_RDMAPROXY" run --sysfs "$dir/node0.json" --devices "$RXP_NODE1_DEV" -- true 2>/dev/null || rc=$?
((rc == 2)) || { echo "a device the snapshot lacks: status $rc" >&2; exit 1; }
((0 == $(views_left))) || { echo "a private /sys tree was left after a refused start" >&2; exit 1; }
"${server_run[@]}" -- ibv_rc_pingpong -d "$RXP_NODE1_DEV" -g "$RXP_NODE1_GID" &
harness=$!
rxp_wait_tcp 18515
((1 == $(views_left))) || { echo "expected the server's private tree in $TMPDIR" >&2; exit 1; }
kill -TERM "$harness"
rc=0
wait "$harness" || rc=$?
((rc == 128 + 15)) || { echo "the harness ended with $rc after SIGTERM" >&2; exit 1; }
((0 == $(views_left))) || { echo "a private /sys tree was left after SIGTERM" >&2; exit 1; }
echo "private /sys trees: removed after each run, a refused start and SIGTERM"
