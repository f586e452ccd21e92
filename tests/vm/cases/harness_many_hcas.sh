#!/bin/bash
# More HCAs than a 32-device table holds: 32 more soft-RoCE devices (rxe2..rxe33, on 16 more
# veth pairs) beside the test bed's two. Under the harness the 34 are listed (ibv_devices, the
# netlink dump) and described (ibv_devinfo, also from a synthesized /sys) as natively; one
# program opens all 34 at once (pyverbs: a context, a PD and a port query on each); and an RC
# ping-pong runs, both sides proxied, on the last one. The devices go again at the end, so that
# `rdma resource show` is back to the agent's baseline.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"

pairs=16
SECONDS=0
cleanup() {
  local i
  for ((i = 2; i < 2 + 2 * pairs; i++)); do rdma link delete "rxe$i" 2>/dev/null || true; done
  for ((i = 0; i < pairs; i++)); do ip link delete "rxpmany$i" 2>/dev/null || true; done
}
trap cleanup EXIT
for ((i = 0; i < pairs; i++)); do
  ip link add "rxpmany$i" type veth peer name "rxpmany${i}p"
  rdma link add "rxe$((2 + 2 * i))" type rxe netdev "rxpmany$i"
  rdma link add "rxe$((3 + 2 * i))" type rxe netdev "rxpmany${i}p"
done
# The last device carries traffic: an address on its netdev, which brings its RoCE v2 GID.
last=rxe$((1 + 2 * pairs))
last_if=rxpmany$((pairs - 1))p
ip addr add 10.98.0.1/24 dev "$last_if"
ip link set "rxpmany$((pairs - 1))" up
ip link set "$last_if" up
want=0000:0000:0000:0000:0000:ffff:0a62:0001
gid=
for ((tries = 0; tries < 600; tries++)); do
  # One grep over the table's 1,024 entries: a cat each takes seconds under TCG.
  found=$(grep -lx "$want" /sys/class/infiniband/"$last"/ports/1/gids/* 2>/dev/null | head -n 1 || true)
  [[ -n $found ]] && { gid=${found##*/}; break; }
  sleep 0.1
done
[[ -n $gid ]] || { echo "FAIL: no IPv4 GID on $last"; exit 1; }

native=$(ibv_devices)
count=$(grep -c ' rxe' <<<"$native" || true)
[[ $count == $((2 + 2 * pairs)) ]] || { echo "FAIL: $count devices natively"; echo "$native"; exit 1; }
rxp_diff "$native" "$(rxp_run -- ibv_devices)"
echo "ibv_devices: $count devices, identical under the harness (${SECONDS}s)"

# ibv_devinfo of every device; -v (each GID index queried: about 2,000 commands a device, a
# second each under TCG) of the last one only.
native=$(ibv_devinfo)
rxp_diff "$(rxp_devinfo_blocks "$native")" "$(rxp_devinfo_blocks "$(rxp_run -- ibv_devinfo)")"
rxp_diff "$(rxp_devinfo_blocks "$native")" \
  "$(rxp_devinfo_blocks "$(rxp_run --sysfs-from-host -- ibv_devinfo)")"
rxp_diff "$(ibv_devinfo -v -d "$last")" "$(rxp_run -- ibv_devinfo -v -d "$last")"
echo "ibv_devinfo: identical under the harness, with the host's /sys view and a synthesized one;" \
     "ibv_devinfo -v -d $last too (${SECONDS}s)"

# Every device open at once, each with a PD and a port query: what the program sees, natively
# and proxied.
all_open='
from pyverbs.device import Context, get_device_list
from pyverbs.pd import PD
names = sorted(d.name.decode() for d in get_device_list())
ctxs = [Context(name=n) for n in names]
pds = [PD(c) for c in ctxs]
states = [c.query_port(1).state for c in ctxs]
print(len(ctxs), "open,", len(pds), "PDs,", sum(1 for s in states if s == 4), "ports active")
for p in pds: p.close()
for c in ctxs: c.close()
'
native=$(/usr/bin/python3 -c "$all_open")
proxied=$(rxp_run --stats -- /usr/bin/python3 -c "$all_open")
echo "all devices open at once: natively '$native', proxied '$proxied' (${SECONDS}s)"
[[ $native == "$proxied" && $native == "$count open, $count PDs,"* ]] ||
  { echo "FAIL: the program opening every device differs under the harness"; exit 1; }

RXP_RUN_OPTS=(--devices "$last")
rxp_pair tcp:18515 \
  rxp_run_default ibv_rc_pingpong -d "$last" -g "$gid" -n 20 -- \
  rxp_run_default ibv_rc_pingpong -d "$last" -g "$gid" -n 20 10.98.0.1
rxp_expect "$RXP_CLIENT_OUT" "20 iters in" "the client's iteration summary on $last"
echo "many HCAs (${SECONDS}s): $count devices listed, described and opened at once as natively; rc_pingpong on $last"
