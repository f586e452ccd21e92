#!/usr/bin/env bash
# The main job: boots the soft-RoCE test-bed VM and runs ib_write_bw between its two nodes,
# showing the result. Installs what it needs and builds first (both do nothing when done).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/scripts/install-deps.sh"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc)" --target vm-image

vmctl=("$root/tests/vm/vmctl" --image-dir "$root/build/vm/6.12")
trap '"${vmctl[@]}" stop >/dev/null 2>&1 || true' EXIT
"${vmctl[@]}" start
"${vmctl[@]}" exec --name demo_ib_write_bw --timeout 120 -- tests/vm/cases/ib_write_bw.sh
