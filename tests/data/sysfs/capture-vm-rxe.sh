#!/bin/bash
# capture-vm-rxe.sh [BUILD_DIR]: re-captures the fifth fixture, vm_rxe.snapshot.json, from the
# live soft-RoCE test bed (tests/vm): rdmaproxy snapshots the guest's own /sys (rxe0 on
# rxpveth0, rxe1 on rxpveth1). GUIDs and MACs change with every boot; the VM test
# sysfs_ibv_devinfo checks that the fixture's shape still matches the test bed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
series=$(sed -n 's/^set(RDMAPROXY_VM_KERNELS "\([^;"]*\).*/\1/p' "$root/tests/vm/CMakeLists.txt")
image=$build/vm/$series
"$root/tests/vm/vmctl" --image-dir "$image" exec --name capture_vm_rxe --timeout 120 -- \
  bash -c '"$1" sysfs snapshot -o "$RXP_SHARE/vm_rxe.snapshot.json" && uname -r >"$RXP_SHARE/vm_rxe.kernel"' \
  capture "$build/tools/rdmaproxy"
kernel=$(cat "$image/run/share/vm_rxe.kernel")
python3 - "$image/run/share/vm_rxe.snapshot.json" "$here/vm_rxe.snapshot.json" "$kernel" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s = {"schema": s.pop("schema"), "version": s.pop("version"),
     "comment": "soft-RoCE test bed guest (Linux %s), captured by tests/data/sysfs/capture-vm-rxe.sh" % sys.argv[3], **s}
with open(sys.argv[2], "w") as f:
    f.write(json.dumps(s, indent=2) + "\n")
PY
echo "capture-vm-rxe: wrote $here/vm_rxe.snapshot.json (kernel $kernel)"
