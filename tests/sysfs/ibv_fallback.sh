#!/bin/bash
# ibv_fallback.sh SYSFS_DIR UVERBS_NAMES DENY_NETLINK_RDMA CMD [ARGS...]
#
# Runs CMD the way a sandbox without RDMA netlink would: with NETLINK_RDMA sockets refused
# (DENY_NETLINK_RDMA, tests/tools/deny_netlink_rdma.cc), so libibverbs takes its sysfs
# fallback, and with SYSFS_PATH=SYSFS_DIR (a rendered tree). libibverbs' try_access_device()
# drops a device unless /dev/infiniband/<uverbsN> exists; the build machines have no RDMA,
# so a private mount namespace gets a /dev holding placeholders for UVERBS_NAMES (a
# space-separated list), plus null/zero/urandom and the host's /dev/shm. Listing works with
# placeholders; opening a device needs the real node, which is what the VM test checks.
set -euo pipefail
sysfs=$1 names=$2 deny=$3
shift 3
[[ -d $sysfs ]] || { echo "ibv_fallback: $sysfs is not a directory" >&2; exit 2; }
dev=$(mktemp -d "${TMPDIR:-/tmp}/rxp-dev.XXXXXX")
trap 'rm -rf "$dev"' EXIT
mkdir -p "$dev/infiniband" "$dev/shm"
for n in $names; do : >"$dev/infiniband/$n"; done
for x in null zero urandom; do : >"$dev/$x"; done
unshare_flags=(--mount)
[[ $(id -u) -eq 0 ]] || unshare_flags=(--map-root-user --mount)
# shellcheck disable=SC2016
unshare "${unshare_flags[@]}" bash -c '
  set -e
  dev=$1 sysfs=$2 deny=$3; shift 3
  for x in null zero urandom; do mount --bind "/dev/$x" "$dev/$x"; done
  mount --bind /dev/shm "$dev/shm"
  mount --rbind "$dev" /dev
  SYSFS_PATH=$sysfs exec "$deny" "$@"
' ibv_fallback "$dev" "$sysfs" "$deny" "$@"
