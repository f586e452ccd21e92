#!/usr/bin/env bash
# Captures what rdma-core's real mlx5 provider (libmlx5) sends, without Mellanox hardware:
# a fake sysfs tree describes one ConnectX-6 Dx (mlx5_0, one RoCE port), the fake mlx5 kernel
# shim (librxp_fake_mlx5.so) answers its ioctl()/write()/mmap() calls the way Linux 6.12's
# mlx5_ib would, and the capture shim (librxp_capture.so) records every call as a test vector.
#
#   tests/tools/capture-mlx5-vectors.sh BUILD_DIR
#
# Writes tests/data/vectors/mlx5_*.jsonl and their golden traces (mlx5_*.trace). Runs on the
# host (no VM): libibverbs discovers the device through sysfs because the shim refuses
# NETLINK_RDMA sockets. Review the diff afterwards: addresses change on every run.
set -euo pipefail

usage() { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/tests/data/vectors"
capture="$build/tests/tools/librxp_capture.so"
fake="$build/tests/tools/librxp_fake_mlx5.so"
workload="$build/tests/tools/rxp_mlx5_verbs_workload"
cli="$build/tools/rdmaproxy"
for f in "$capture" "$fake" "$workload" "$cli"; do
  [[ -e $f ]] || { echo "missing $f (build it first)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- the fake sysfs (what libibverbs' sysfs.c / init.c / device.c and libmlx5 read) ----------
# make_sysfs DIR roce|ib: one mlx5_0 whose port is RoCE (ConnectX-6 Dx, 15b3:101d) or
# InfiniBand (ConnectX-6, 15b3:101b); the fake kernel is told the same (RXP_FAKE_MLX5_PORT).
make_sysfs() {
  local sysfs=$1 kind=$2
  put() { mkdir -p "$(dirname "$sysfs/$1")"; printf '%s\n' "$2" >"$sysfs/$1"; }
  local dev=class/infiniband/mlx5_0 pci=devices/pci0000:00/0000:00:03.0
  local pci_dev=0x101d hca=MT4125 board=MT_0000000359
  [[ $kind == ib ]] && { pci_dev=0x101b; hca=MT4123; board=MT_0000000222; }
  put class/infiniband_verbs/abi_version 6
  put class/infiniband_verbs/uverbs0/ibdev mlx5_0
  put class/infiniband_verbs/uverbs0/dev 231:192
  put class/infiniband_verbs/uverbs0/abi_version 1  # MLX5_IB_UVERBS_ABI_VERSION
  # The PCI function, which libmlx5's mlx5_hca_table matches by modalias.
  put "$pci/modalias" "$(printf 'pci:v000015B3d%08Xsv000015B3sd00000016bc02sc00i00' "$pci_dev")"
  put "$pci/vendor" 0x15b3
  put "$pci/device" "$pci_dev"
  put "$pci/local_cpus" 00000001
  put "$pci/numa_node" -1
  put "$dev/node_type" "1: CA"
  put "$dev/node_guid" 0c42:a103:00f5:3a10
  put "$dev/sys_image_guid" 0c42:a103:00f5:3a10
  put "$dev/fw_ver" 22.39.1002
  put "$dev/hca_type" "$hca"
  put "$dev/hw_rev" 0x0
  put "$dev/board_id" "$board"
  put "$dev/node_desc" "fake-host mlx5_0"
  ln -s "../../../$pci" "$sysfs/$dev/device"
  local port="$dev/ports/1"
  put "$port/state" "4: ACTIVE"
  put "$port/phys_state" "5: LinkUp"
  put "$port/pkeys/0" 0xffff
  put "$port/sm_sl" 0
  put "$port/lid_mask_count" 0
  # The GID table the fake kernel reports (tests/tools/fake_mlx5_preload.cc: kGids, kIbGids).
  if [[ $kind == ib ]]; then
    put "$port/link_layer" InfiniBand
    put "$port/rate" "200 Gb/sec (4X HDR)"
    put "$port/lid" 0x1a
    put "$port/sm_lid" 0x1
    put "$port/cap_mask" 0x2651e848
    put "$port/gids/0" fe80:0000:0000:0000:0c42:a103:00f5:3a10
    put "$port/gid_attrs/types/0" "IB/RoCE v1"
  else
    put "$port/link_layer" Ethernet
    put "$port/rate" "100 Gb/sec (2X HDR)"
    put "$port/lid" 0x0
    put "$port/sm_lid" 0x0
    put "$port/cap_mask" 0x04010000
    local ll=fe80:0000:0000:0000:0e42:a1ff:fef5:3a10 v4=0000:0000:0000:0000:0000:ffff:c000:020a
    put "$port/gids/0" $ll; put "$port/gid_attrs/types/0" "IB/RoCE v1"
    put "$port/gids/1" $ll; put "$port/gid_attrs/types/1" "RoCE v2"
    put "$port/gids/2" $v4; put "$port/gid_attrs/types/2" "IB/RoCE v1"
    put "$port/gids/3" $v4; put "$port/gid_attrs/types/3" "RoCE v2"
    for i in 0 1 2 3; do put "$port/gid_attrs/ndevs/$i" lo; done
  fi
}
make_sysfs "$work/sys-roce" roce
make_sysfs "$work/sys-ib" ib

# --- running one program under both shims ----------------------------------------------------
export SYSFS_PATH="$work/sys-roce" MLX5_LOCAL_CPUS=1
export RXP_CAPTURE_KERNEL="6.12 (fake mlx5: tests/tools/fake_mlx5_preload.cc)"
preload="$capture $fake"

# capture NAME SECONDS [ENV=VALUE ...] -- PROGRAM ARGS...: runs PROGRAM under both shims. A
# program that is still waiting when SECONDS run out (a pingpong that waits for completions a
# fake device never produces) is stopped; that is expected and not an error.
capture() {
  local name=$1 secs=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local file="$out/mlx5_$name.jsonl"
  rm -f "$file"
  local rc=0
  timeout "$secs" env "${envs[@]}" RXP_CAPTURE="$file" LD_PRELOAD="$preload" "$@" \
    >"$work/$name.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 && $rc -ne 124 ]]; then
    echo "$name failed ($rc):" >&2; cat "$work/$name.log" >&2; exit 1
  fi
}

# finish NAME: the golden trace of a captured vector file.
finish() {
  local file="$out/mlx5_$1.jsonl"
  [[ -s $file ]] || { echo "$1: nothing captured" >&2; exit 1; }
  "$cli" abi decode "$file" >"${file%.jsonl}.trace"
  printf '%-28s %4d calls\n' "mlx5_$1" $(($(wc -l <"$file") - 1))
}

# A pingpong pair over TCP on loopback: the server first, then the client once it listens.
pair() {
  local name=$1 port=$2; shift 2
  capture "${name}_server" 8 -- "$@" -p "$port" &
  local server=$!
  for _ in $(seq 50); do
    grep -q LISTEN <<<"$(ss -ltn "sport = :$port" 2>/dev/null)" && break
    sleep 0.1
  done
  capture "${name}_client" 5 -- "$@" -p "$port" 127.0.0.1
  wait "$server"
  finish "${name}_server"
  finish "${name}_client"
}

capture devinfo 30 -- ibv_devinfo -v -d mlx5_0 && finish devinfo
capture verbs 30 -- "$workload" mlx5_0 && finish verbs
capture verbs_write 30 RXP_FAKE_MLX5_NO_IOCTL=1 -- "$workload" mlx5_0 && finish verbs_write
capture verbs_ib 30 SYSFS_PATH="$work/sys-ib" RXP_FAKE_MLX5_PORT=ib -- "$workload" mlx5_0 &&
  finish verbs_ib
pair rc_pingpong 18515 ibv_rc_pingpong -d mlx5_0 -g 3 -n 1
pair ud_pingpong 18516 ibv_ud_pingpong -d mlx5_0 -g 3 -n 1
pair srq_pingpong 18517 ibv_srq_pingpong -d mlx5_0 -g 3 -n 1 -q 2
