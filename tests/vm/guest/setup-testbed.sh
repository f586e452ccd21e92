#!/bin/bash
# setup-testbed.sh SHARE: builds the two-node soft-RoCE network inside the guest and writes
# SHARE/testbed.env, which every test sources (through testbed.sh).
#
# Two nodes, one namespace. rdma_rxe (6.1 and 6.12) opens its RoCE v2 UDP socket and routes
# every send in init_net only (rxe_net.c: rxe_setup_udp_tunnel(&init_net, ...),
# ip_route_output_key(&init_net, ...)), so an rxe device on a netdev moved into another network
# namespace can neither send nor receive. Instead both ends of a veth pair stay in init_net,
# each with its own address and rxe device, and policy routing makes traffic between the two
# addresses leave through one end and arrive at the other, so it crosses a real netdev (the
# tests check the veth packet counters) instead of being short-cut through loopback:
#   - the "local" table is consulted only after rule 100/101 (moved from pref 0 to 1000);
#   - locally generated packets (iif lo) to node1's address use a table routing via node0's
#     veth end, and the other way round;
#   - packets arriving on a veth end hit the local table as usual and are delivered.
set -euo pipefail
share=${1:?usage: setup-testbed.sh SHARE}

node0_if=rxpveth0; node0_ip=10.99.0.1; node0_dev=rxe0
node1_if=rxpveth1; node1_ip=10.99.0.2; node1_dev=rxe1

ip link set lo up
ip link add "$node0_if" type veth peer name "$node1_if"
for c in all default; do
  echo 0 >/proc/sys/net/ipv4/conf/$c/rp_filter
  echo 1 >/proc/sys/net/ipv4/conf/$c/accept_local
done
ip addr add "$node0_ip/24" dev "$node0_if"
ip addr add "$node1_ip/24" dev "$node1_if"
for i in "$node0_if" "$node1_if"; do
  echo 0 >/proc/sys/net/ipv4/conf/$i/rp_filter
  echo 1 >/proc/sys/net/ipv4/conf/$i/accept_local
  ip link set "$i" up
done
ip rule add pref 1000 lookup local
ip rule del pref 0
ip route add "$node1_ip/32" dev "$node0_if" src "$node0_ip" table 100
ip route add "$node0_ip/32" dev "$node1_if" src "$node1_ip" table 101
ip rule add pref 100 to "$node1_ip" iif lo lookup 100
ip rule add pref 101 to "$node0_ip" iif lo lookup 101

rdma link add "$node0_dev" type rxe netdev "$node0_if"
rdma link add "$node1_dev" type rxe netdev "$node1_if"

# The GID index that carries the node's IPv4 address (RoCE v2, ::ffff:a.b.c.d); the kernel fills
# the table asynchronously after the link comes up, so wait for it (up to 60 s: a loaded TCG
# host can slow the guest's workqueues many times over; the usual wait is well under a second).
gid_index_of() {  # dev ip
  local dev=$1 ip=$2 want g i tries
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
  for ((tries = 0; tries < 600; tries++)); do
    for g in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
      i=${g##*/}
      if [[ "$(cat "$g" 2>/dev/null)" == "$want" ]]; then echo "$i"; return 0; fi
    done
    sleep 0.1
  done
  echo "setup-testbed: no GID for $ip on $dev" >&2
  return 1
}
node0_gid=$(gid_index_of "$node0_dev" "$node0_ip")
node1_gid=$(gid_index_of "$node1_dev" "$node1_ip")

cat >"$share/testbed.env.tmp" <<ENV
RXP_NODE0_DEV=$node0_dev
RXP_NODE0_IP=$node0_ip
RXP_NODE0_NETDEV=$node0_if
RXP_NODE0_GID=$node0_gid
RXP_NODE1_DEV=$node1_dev
RXP_NODE1_IP=$node1_ip
RXP_NODE1_NETDEV=$node1_if
RXP_NODE1_GID=$node1_gid
RXP_GUEST_KERNEL=$(uname -r)
ENV
mv "$share/testbed.env.tmp" "$share/testbed.env"
