#!/bin/bash
# The harness's scratch region stays read-only to the program on this guest's kernel
# (docs/harness.md, "The scratch region"): sealed with mseal on Linux 6.10 and later, at the
# fixed low window with the base filter's rules before that. The testee (tools/harness/testdata)
# finds the region in /proc/self/maps and tries mprotect, munmap, madvise(MADV_DONTNEED), a
# MAP_FIXED mapping over it and mprotect in a fork child (each must be EPERM), then opens
# /proc/self/mem for writing six ways (each must be EACCES; a read-only open works).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
testee=$RXP_BUILD/tools/harness/rxp_harness_testee
[[ -x $testee ]] || { echo "no $testee (build first)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
native=$("$testee" scratch-guard "$dir")
grep -qx "mem-rdwr=0" <<<"$native" || { echo "natively /proc/self/mem did not open for writing: $native" >&2; exit 1; }
out=$(rxp_run -- "$testee" scratch-guard "$dir" 2>&1)
echo "$out"
expect() {  # expect KEY VALUE
  grep -qx "$1=$2" <<<"$out" || { echo "expected $1=$2 under the harness" >&2; exit 1; }
}
expect found 1
for key in mprotect munmap dontneed map-over child-mprotect; do expect "$key" -EPERM; done
expect mem-read 0
for key in mem-rdwr task-mem via-link via-dirfd openat2 parent-mem; do expect "$key" -EACCES; done
region=$(sed -n 's/^region=//p' <<<"$out")
if ((region < 0x400000)); then
  for key in below-map below-mprotect below-unmap; do expect "$key" 0; done
  expect span-unmap -EPERM
  how="at the fixed window $(printf '%#x' "$region"), guarded by the filter"
else
  how="sealed with mseal at $(printf '%#x' "$region")"
fi
echo "scratch region on Linux $(uname -r): $how; /proc/<pid>/mem not writable"
# No MR may cover the region (its writable half holds an ioctl's validated copy while the kernel
# runs it; a device writing there could change it): EFAULT before the kernel, whatever half.
hostile=$RXP_BUILD/tests/conformance/rxp_hostile
ibdev=$(cat /sys/class/infiniband_verbs/uverbs0/ibdev)
mrs=$(rxp_run --stats -- "$hostile" --scratch-mr "$ibdev" 2>"$dir/mr.stats")
echo "$mrs"
for key in scratch_mr_read_only_half scratch_mr_writable_half scratch_mr_whole; do
  grep -qx "$key EFAULT" <<<"$mrs" || { echo "expected $key EFAULT under the harness" >&2; exit 1; }
done
grep -qx "own_mr ok" <<<"$mrs" || { echo "an MR over the program's own memory failed" >&2; exit 1; }
grep -q "overlaps the harness's scratch region" "$dir/mr.stats" ||
  { echo "no log line for the refused MRs" >&2; cat "$dir/mr.stats" >&2; exit 1; }
echo "MRs over the scratch region: EFAULT, not forwarded; an MR over the program's memory works"
