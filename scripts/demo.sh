#!/usr/bin/env bash
# The main job: boots the soft-RoCE test-bed VM and runs ib_write_bw between its two nodes,
# natively and then with both sides under `rdmaproxy run --trace`, showing the commands the
# proxy decoded and the two bandwidths side by side. Installs what it needs and builds first
# (both do nothing when done).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/scripts/install-deps.sh"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc)"

vmctl=("$root/tests/vm/vmctl" --image-dir "$root/build/vm/6.12")
trap '"${vmctl[@]}" stop >/dev/null 2>&1 || true' EXIT
"${vmctl[@]}" start
"${vmctl[@]}" exec --name demo_ib_write_bw --timeout 300 -- \
  tests/vm/cases/demo_ib_write_bw.sh "$root/build"
