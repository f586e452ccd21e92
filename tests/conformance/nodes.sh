# nodes.sh: sourced by the conformance suite (suite.sh) and the host benchmarks
# (tests/bench/run-on-host.sh) to pick a device on a real RDMA host.
# shellcheck shell=bash

# detect_node: the first device with an active port 1 and a RoCE v2 IPv4 GID (DEV:INDEX:IP), or
# an InfiniBand port (DEV:0:IPoIB address, or 127.0.0.1 without one).
detect_node() {
  local dev port gid type ip ndev
  for dev in /sys/class/infiniband/*; do
    [[ -e $dev ]] || continue
    port=$dev/ports/1
    [[ $(cat "$port/state" 2>/dev/null) == *ACTIVE* ]] || continue
    if [[ $(cat "$port/link_layer" 2>/dev/null) == InfiniBand ]]; then
      ndev=$(ls "$dev/device/net" 2>/dev/null | sed -n 1p)
      ip=$(ip -4 -o addr show dev "$ndev" 2>/dev/null | awk '!done {sub(/\/.*/, "", $4); print $4; done = 1}')
      echo "$(basename "$dev"):0:${ip:-127.0.0.1}"
      return 0
    fi
    for type in "$port"/gid_attrs/types/*; do
      [[ $(cat "$type" 2>/dev/null) == "RoCE v2" ]] || continue
      gid=$(cat "$port/gids/$(basename "$type")" 2>/dev/null)
      [[ $gid == 0000:0000:0000:0000:0000:ffff:* ]] || continue
      ip=$(printf '%d.%d.%d.%d' "0x${gid:30:2}" "0x${gid:32:2}" "0x${gid:35:2}" "0x${gid:37:2}")
      echo "$(basename "$dev"):$(basename "$type"):$ip"
      return 0
    done
  done
  return 1
}
