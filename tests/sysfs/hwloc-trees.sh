#!/usr/bin/env bash
# hwloc-trees.sh BUILD_DIR HWLOC_SRC [WORK]: runs the sysfs oracles over hwloc's own test trees.
#
# hwloc's source (https://github.com/open-mpi/hwloc, tests/hwloc/linux/*.tar.bz2) carries
# /sys + /proc captures of real machines, old kernels and hand-made topologies: trees this
# project did not write. For each one this snapshots the tree, renders the snapshot, and runs
# oracle.py's roundtrip, hwloc, nccl_walk and ibverbs checks on it (docs/sysfs.md, "Fixtures
# and oracles"). Not part of CTest: it needs an hwloc checkout. Prints one line per tree and
# exits 1 if a snapshot or render failed or an oracle disagreed on a tree that lstopo itself
# can read.
set -uo pipefail
build=$(cd "${1:?usage: hwloc-trees.sh BUILD_DIR HWLOC_SRC [WORK]}" && pwd)
src=$(cd "${2:?usage: hwloc-trees.sh BUILD_DIR HWLOC_SRC [WORK]}" && pwd)
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/tools/rdmaproxy
oracle=(python3 "$here/oracle.py")
extra=(--walk "$build/tests/sysfs/rxp_nccl_walk" --deny "$build/tests/tools/deny_netlink_rdma"
       --ibv-fallback "$here/ibv_fallback.sh")
# Trees whose capture differs from what a live kernel shows, so that lstopo reads the source
# differently from the (kernel-faithful) rendering: name -> why.
declare -A known_hwloc_difference=(
  [32intel64-2p8co2t+8ve]="the capture's /sys/bus/pci/devices lacks bridge 0000:5f:03.0 (a live kernel lists every function); the rendered tree lists it, so lstopo puts the NICs below it, as on the real machine"
)
bad=0 trees=0
for tarball in "$src"/tests/hwloc/linux/*.tar.bz2; do
  name=$(basename "$tarball" .tar.bz2)
  w=$work/$name
  rm -rf "$w" && mkdir -p "$w/x"
  tar -xjf "$tarball" -C "$w/x" 2>/dev/null
  inner=$(find "$w/x" -mindepth 1 -maxdepth 2 -type d -name sys -printf '%h\n' | head -n 1)
  [[ -n "$inner" ]] || { echo "$name: no sys/ in the tarball, skipped"; continue; }
  mv "$inner" "$w/root"
  trees=$((trees + 1))
  if ! err=$("$tool" sysfs snapshot --root "$w/root/sys" -o "$w/host.json" 2>&1 >/dev/null); then
    echo "$name: FAIL snapshot: $(tail -n 1 <<<"$err")"; bad=$((bad + 1)); continue
  fi
  if ! err=$("$tool" sysfs render "$w/host.json" -o "$w/rendered" 2>&1 >/dev/null &&
             "$tool" sysfs snapshot --root "$w/rendered" -o "$w/rendered.json" 2>&1 >/dev/null); then
    echo "$name: FAIL render: $(tail -n 1 <<<"$err")"; bad=$((bad + 1)); continue
  fi
  line="$name:"
  for check in roundtrip hwloc nccl_walk ibverbs; do
    if "${oracle[@]}" "$check" --tool "$tool" --work "$w" --data "$here/../data/sysfs" \
         --fixture "$name" "${extra[@]}" >"$w/$check.log" 2>&1; then
      line+=" $check=ok"
    elif [[ $check == hwloc ]] && grep -q "lstopo-no-graphics -i $w/root .*failed" "$w/$check.log"; then
      line+=" hwloc=n/a(lstopo cannot read the source tree)"
    elif [[ $check == hwloc && -n "${known_hwloc_difference[$name]:-}" ]]; then
      line+=" hwloc=differs-as-known(${known_hwloc_difference[$name]})"
    else
      line+=" $check=FAIL($w/$check.log)"; bad=$((bad + 1))
    fi
  done
  echo "$line"
done
echo "hwloc-trees: $trees trees, $bad failures (work: $work)"
((bad == 0))
