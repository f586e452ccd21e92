#!/bin/bash
# sysfs_output_test.sh RDMAPROXY SOURCE_ROOT: where `rdmaproxy sysfs` writes (docs/sysfs.md,
# "render refuses ..."): -o of select / snapshot replaces a regular file atomically and writes
# anything else in place (a FIFO, a symlink) without replacing it, '-' is stdout, and render
# refuses a symlink at the output path with or without a trailing slash, --force or not, leaving
# the link's target untouched; render writes its --write-selected snapshot before the tree;
# --devices takes one comma list per use and leaves the snapshot positional alone.
set -euo pipefail
rxp=${1:?usage: sysfs_output_test.sh RDMAPROXY SOURCE_ROOT}
src=${2:?usage: sysfs_output_test.sh RDMAPROXY SOURCE_ROOT}
fixture=$src/tests/data/sysfs/vm_rxe.snapshot.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"

"$rxp" sysfs select "$fixture" -o regular.json
[[ -f regular.json && ! -L regular.json ]] || fail "select -o FILE did not write a regular file"
grep -q '"rdmaproxy-sysfs-snapshot"' regular.json || fail "select -o FILE: not a snapshot"

"$rxp" sysfs select "$fixture" -o - >stdout.json
cmp -s stdout.json regular.json || fail "select -o - is not the snapshot on stdout"

# A standard output that cannot be written (a full disk) fails the command, whatever the size.
if [[ -w /dev/full ]]; then
  for cmd in "select $fixture -o -" "show $fixture"; do
    # shellcheck disable=SC2086
    if "$rxp" sysfs $cmd >/dev/full 2>full.err; then fail "sysfs $cmd >/dev/full: exit 0"; fi
    grep -q "ENOSPC: cannot write to standard output" full.err ||
      fail "sysfs $cmd >/dev/full: $(cat full.err)"
  done
fi

# --devices takes one comma list per use: the snapshot after it stays the positional.
"$rxp" sysfs select --devices rxe0 "$fixture" --devices rxe1 -o - >both.json ||
  fail "select --devices X SNAPSHOT: refused"
grep -q '"rxe1"' both.json && grep -q '"rxe0"' both.json || fail "select --devices X --devices Y lost one"
"$rxp" sysfs select --devices rxe1 "$fixture" -o - >one.json
! grep -q '"rxe0"' one.json || fail "select --devices rxe1 kept rxe0"

: >target.json
ln -s target.json link.json
"$rxp" sysfs select "$fixture" -o link.json
[[ -L link.json ]] || fail "select -o LINK replaced the symlink"
cmp -s target.json regular.json || fail "select -o LINK did not write through the link"

mkfifo fifo
cat fifo >from_fifo.json &
reader=$!
timeout 30 "$rxp" sysfs select "$fixture" -o fifo || fail "select -o FIFO"
wait "$reader"
[[ -p fifo ]] || fail "select -o FIFO replaced the FIFO"
cmp -s from_fifo.json regular.json || fail "select -o FIFO: the reader did not get the snapshot"
echo "-o: regular file, stdout, through a symlink, into a FIFO"

mkdir victim
touch victim/keep
ln -s victim dirlink
for out in dirlink dirlink/ dirlink//; do
  for force in "" --force; do
    if "$rxp" sysfs render "$fixture" -o "$out" $force 2>err; then
      fail "render -o $out $force rendered through a symlink"
    fi
    grep -q "symbolic link" err || fail "render -o $out $force: $(cat err)"
    [[ -e victim/keep && $(ls victim) == keep ]] ||
      fail "render -o $out $force touched the link's target"
  done
done
echo "render refuses a symlink at the output path, with or without a trailing slash"

# A --write-selected path that cannot be written stops render before it writes the tree.
if "$rxp" sysfs render "$fixture" -o tree --write-selected nodir/selected.json 2>err; then
  fail "render with an unwritable --write-selected succeeded"
fi
[[ ! -e tree ]] || fail "render wrote the tree although --write-selected failed"
"$rxp" sysfs render "$fixture" -o tree --write-selected - >selected.json 2>/dev/null
cmp -s selected.json regular.json || fail "render --write-selected - is not the selection on stdout"
[[ -f tree/class/infiniband_verbs/abi_version ]] || fail "render -o tree wrote no tree"
echo "render --write-selected: written first; '-' is stdout"
