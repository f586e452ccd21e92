#!/usr/bin/env bash
# recapture-vectors.sh [BUILD_DIR]: boots the test bed, captures ABI vectors from real
# rdma-core programs (tests/vm/cases/capture_vectors.sh) and replaces tests/data/vectors/*.jsonl
# with them. Review the diff, then regenerate the golden traces:
#   build/tools/rdmaproxy abi decode tests/data/vectors/X.jsonl > tests/data/vectors/X.trace
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
vmctl=("$root/tests/vm/vmctl" --image-dir "$build/vm/6.12")
share=$build/vm/6.12/run/share
cmake --build "$build" --target rxp_capture rdmaproxy vm-image
cd "$root"
"${vmctl[@]}" start
"${vmctl[@]}" exec --name capture_vectors --timeout 600 -- \
  tests/vm/cases/capture_vectors.sh "$build" "$share/vectors"
mkdir -p tests/data/vectors
# The mlx5_* vectors come from the fake mlx5 kernel (tests/tools/capture-mlx5-vectors.sh).
find tests/data/vectors -maxdepth 1 \( -name '*.jsonl' -o -name '*.trace' \) \
  ! -name 'mlx5_*' -delete
cp "$share"/vectors/*.jsonl tests/data/vectors/
for f in tests/data/vectors/*.jsonl; do
  "$build/tools/rdmaproxy" abi decode "$f" >"${f%.jsonl}.trace"
done
"${vmctl[@]}" stop
ls -la tests/data/vectors
