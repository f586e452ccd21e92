#!/bin/bash
# --devices uverbs0=uverbs1: the app sees exactly one device, host uverbs1 (node1's rxe device)
# under the sandbox name uverbs0, and can use it.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
host_uverbs=uverbs1
ibdev=$(cat /sys/class/infiniband_verbs/$host_uverbs/ibdev)
RXP_RUN_OPTS=(--devices "uverbs0=$host_uverbs")
devices=$(rxp_run_default ibv_devices)
echo "$devices"
listed=$(awk 'NR > 2 {print $1}' <<<"$devices")
[[ "$listed" == "$ibdev" ]] || { echo "expected only $ibdev, got: $listed" >&2; exit 1; }
entries=$(rxp_run_default ls /dev/infiniband | tr '\n' ' ')
echo "/dev/infiniband in the sandbox: $entries"
[[ "$entries" == "rdma_cm uverbs0 " ]] || { echo "unexpected /dev/infiniband listing" >&2; exit 1; }
verbs=$(rxp_run_default ls /sys/class/infiniband_verbs | tr '\n' ' ')
[[ "$verbs" == "abi_version uverbs0 " ]] || { echo "unexpected infiniband_verbs: $verbs" >&2; exit 1; }
# The sandbox uverbs0 is the host's uverbs1 device node.
want=$(stat -c %t:%T /dev/infiniband/$host_uverbs)
got=$(rxp_run_default stat -c %t:%T /dev/infiniband/uverbs0)
[[ "$want" == "$got" ]] || { echo "uverbs0 is $got, expected host $host_uverbs ($want)" >&2; exit 1; }
if rxp_run_default stat /dev/infiniband/uverbs1 2>/dev/null; then
  echo "host uverbs1 is visible under its own name" >&2
  exit 1
fi
# stat and statx with AT_EMPTY_PATH but AT_FDCWD are path lookups, not fstat (vfs_statx() uses
# the flag only for an empty name): they stop like any lookup (intercept_rules.cc), so they see
# the renamed node and not the hidden one. Prints "<call> <major>:<minor>" (hex, as stat -c
# %t:%T) or "<call> errno <n>" for each.
empty_path_stat='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_EMPTY_PATH, STATX_BASIC_STATS = -100, 0x1000, 0x7ff
path, buf = sys.argv[1].encode(), ctypes.create_string_buffer(256)
field = lambda at, size: int.from_bytes(buf.raw[at:at + size], "little")
def report(call, r, major, minor):
    print(f"{call} {major:x}:{minor:x}" if r == 0 else f"{call} errno {ctypes.get_errno()}")
r = libc.syscall(ctypes.c_long(262), ctypes.c_long(AT_FDCWD), path, buf, ctypes.c_long(AT_EMPTY_PATH))
rdev = field(40, 8)  # struct stat.st_rdev (x86-64)
report("newfstatat", r, os.major(rdev), os.minor(rdev))
r = libc.syscall(ctypes.c_long(332), ctypes.c_long(AT_FDCWD), path, ctypes.c_long(AT_EMPTY_PATH),
                 ctypes.c_long(STATX_BASIC_STATS), buf)
report("statx", r, field(128, 4), field(132, 4))  # stx_rdev_major, stx_rdev_minor
'
for check in "uverbs0:newfstatat $want statx $want" "uverbs1:newfstatat errno 2 statx errno 2"; do
  got=$(rxp_run_default python3 -c "$empty_path_stat" "/dev/infiniband/${check%%:*}" | tr '\n' ' ')
  [[ "$got" == "${check#*:} " ]] ||
    { echo "AT_EMPTY_PATH stat of ${check%%:*}: '$got', expected '${check#*:}'" >&2; exit 1; }
done
native=$(python3 -c "$empty_path_stat" "/dev/infiniband/$host_uverbs" | tr '\n' ' ')
[[ "$native" == "newfstatat $want statx $want " ]] ||
  { echo "AT_EMPTY_PATH stat natively: '$native'" >&2; exit 1; }
grep -q PORT_ACTIVE <<<"$(rxp_run_default ibv_devinfo -d "$ibdev")"
# RDMA netlink tells the same (netlink_answer.h): the device list holds only $ibdev, at its host
# index, and its uverbs char device is uverbs0; iproute2's `rdma dev` and `rdma link` print
# the native line of that device only.
index=$(rdma dev show "$ibdev" | cut -d: -f1)
probe=$(rxp_run_default "$RXP_BUILD/tests/conformance/rxp_netlink_probe" 2>/dev/null)
grep '^get' <<<"$probe"
for want in "get ok devices=1 $ibdev:$index" "get_chardev_each ok $ibdev=uverbs0"; do
  grep -qxF "$want" <<<"$probe" || { echo "expected '$want' from the netlink probe" >&2; exit 1; }
done
for what in dev link; do
  native=$(rdma "$what" | grep -F " $ibdev")
  proxied=$(rxp_run_default rdma "$what")
  [[ -n $native && "$proxied" == "$native" ]] ||
    { echo "rdma $what under the harness: '$proxied', expected '$native'" >&2; exit 1; }
done
# A loopback pingpong on the renamed device.
rxp_pair tcp:18515 \
  rxp_run_default ibv_rc_pingpong -d "$ibdev" -g "$RXP_NODE1_GID" -n 50 -- \
  rxp_run_default ibv_rc_pingpong -d "$ibdev" -g "$RXP_NODE1_GID" -n 50 "$RXP_NODE1_IP"
rxp_expect "$RXP_CLIENT_OUT" "50 iters in" "the client's iteration summary"
echo "renaming: $ibdev seen as uverbs0 only"
