#!/usr/bin/env bash
# mkinitramfs.sh KERNEL_ENV OUT.cpio.gz
#
# Builds the test bed's initramfs: busybox-static, tests/vm/initramfs-init.sh as /init, and the
# kernel modules the guest needs (decompressed: busybox insmod reads plain .ko only), listed
# with their dependencies in load order. Built at build time; never committed.
set -euo pipefail

kernel_env=${1:?usage: mkinitramfs.sh KERNEL_ENV OUT}
out=${2:?usage: mkinitramfs.sh KERNEL_ENV OUT}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1090
source "$kernel_env"   # KVER VMLINUZ MODDIR

# Modules, in the order they must be loaded (dependencies are added in front of each).
required=(
  netfs 9pnet 9pnet_virtio 9p   # the host root and the results share over virtio-9p
  overlay                       # tmpfs upper over the read-only host root
  crc32_generic                 # rdma_rxe needs a crc32 shash: "failed to init crc32 algorithm err:-2"
  rdma_rxe                      # soft-RoCE (pulls ib_core, ib_uverbs, udp tunnels)
  rdma_ucm                      # /dev/infiniband/rdma_cm (pulls rdma_cm, iw_cm, ib_cm, configfs)
  ib_umad                       # /dev/infiniband/umad*, as on a real host
  veth                          # the two-node link
)
# Loaded first when they are modules (6.12 has them built in).
transport=(virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci)
# Loaded last when present: a real dma-buf exporter (built in on 6.12, absent on 6.1).
extras=(udmabuf)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,modules,proc,sys,dev,newroot}
cp /bin/busybox "$work/bin/busybox"
install -m 0755 "$here/initramfs-init.sh" "$work/init"

declare -A loaded=()
order=()

path_of() {  # module name -> path relative to MODDIR, or empty
  local name=${1//-/_} alt=${1//_/-}
  grep -m1 -E "(^|/)(${name}|${alt})\.ko(\.xz|\.zst|\.gz)?:" "$MODDIR/modules.dep" | cut -d: -f1 || true
}
is_builtin() {
  local name=${1//-/_} alt=${1//_/-}
  grep -q -E "(^|/)(${name}|${alt})\.ko$" "$MODDIR/modules.builtin"
}
add_path() {  # add a module (by path) after its dependencies
  local path=$1 deps d
  [[ -n "${loaded[$path]:-}" ]] && return 0
  deps=$(grep -m1 "^$path:" "$MODDIR/modules.dep" | cut -d: -f2)
  for d in $deps; do add_path "$d"; done
  loaded[$path]=1
  order+=("$path")
}
add_module() {  # name, required|optional
  local path
  path=$(path_of "$1")
  if [[ -n "$path" ]]; then add_path "$path"; return 0; fi
  is_builtin "$1" && return 0
  [[ $2 == optional ]] && return 0
  echo "mkinitramfs: module $1 is neither in modules.dep nor built in ($KVER)" >&2
  exit 1
}
for m in "${transport[@]}"; do add_module "$m" optional; done
for m in "${required[@]}"; do add_module "$m" required; done
for m in "${extras[@]}"; do add_module "$m" optional; done

: >"$work/modules/load-order"
for path in "${order[@]}"; do
  base=$(basename "$path")
  case "$base" in
    *.ko.xz)  plain=${base%.xz};  xz -dc "$MODDIR/$path" >"$work/modules/$plain" ;;
    *.ko.zst) plain=${base%.zst}; zstd -qdc "$MODDIR/$path" >"$work/modules/$plain" ;;
    *.ko.gz)  plain=${base%.gz};  gzip -dc "$MODDIR/$path" >"$work/modules/$plain" ;;
    *.ko)     plain=$base;        cp "$MODDIR/$path" "$work/modules/$plain" ;;
  esac
  echo "$plain" >>"$work/modules/load-order"
done

mkdir -p "$(dirname "$out")"
(cd "$work" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($KVER, ${#order[@]} modules)" >&2
