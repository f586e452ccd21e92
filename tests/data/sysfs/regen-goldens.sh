#!/bin/bash
# regen-goldens.sh [RDMAPROXY]: rewrites the golden snapshots NAME.snapshot.json of the
# generated fixtures (hosts/*.py) after an intended change to a fixture or to the reader.
# Review the diff before committing it: the sysfs.NAME.golden tests compare against these.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-$here/../../../build/tools/rdmaproxy}
work=$(mktemp -d "${TMPDIR:-/tmp}/rxp-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT
for host in "$here"/hosts/*.py; do
  name=$(basename "$host" .py)
  python3 "$here/mkfakeroot.py" "$name" "$work/$name" >/dev/null
  "$tool" sysfs snapshot --root "$work/$name/sys" -o "$here/$name.snapshot.json"
done
