#!/bin/bash
# A program's own seccomp filter cannot relabel its verbs calls past the harness
# (docs/harness.md, "The program's own seccomp filters"). rxp_own_seccomp_filter opens the
# device, stacks a filter returning SECCOMP_RET_TRACE with data of its choosing on every ioctl,
# and allocates a PD. Natively no tracer is attached: ENOSYS. Under the harness the
# ALLOC_PD is still the proxied call it is, whatever the data: allowed by the default policy,
# refused with the policy's errno and log line by a policy that denies it. The data: 0, a tag
# the harness does not have, and another rule's tag (6, close's).
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
source "$(dirname "$0")/harness_lib.sh"
prog=$RXP_BUILD/tests/conformance/rxp_own_seccomp_filter
[[ -x $prog ]] || { echo "no $prog (build first)" >&2; exit 1; }
policy=$(mktemp)
err=$(mktemp)
trap 'rm -f "$policy" "$err"' EXIT
echo '{"version": 1, "deny": ["INVOKE_WRITE ALLOC_PD"]}' >"$policy"
native=$("$prog" "$RXP_NODE0_DEV" 0)
[[ $native == "alloc_pd ENOSYS" ]] || { echo "natively: '$native', expected ENOSYS" >&2; exit 1; }
for tag in 0 0xffff 6; do
  allowed=$(rxp_run -- "$prog" "$RXP_NODE0_DEV" "$tag" 2>&1)
  echo "data $tag, default policy: $allowed"
  grep -qx "alloc_pd ok" <<<"$allowed" || { echo "expected the PD to be allocated" >&2; exit 1; }
  denied=$(rxp_run --policy "$policy" -- "$prog" "$RXP_NODE0_DEV" "$tag" 2>&1)
  echo "data $tag, ALLOC_PD denied: $denied"
  grep -qx "alloc_pd EPERM" <<<"$denied" || { echo "expected the policy's EPERM" >&2; exit 1; }
  grep -q "ALLOC_PD: denied by the sandbox policy" <<<"$denied" ||
    { echo "expected the policy's log line" >&2; exit 1; }
done
echo "own seccomp filter: ENOSYS natively; under the harness the policy decides, for every tag"

# An allow-list that predates mseal(2) (it kills the caller of mseal, traps it, or refuses it)
# installed before the program starts: the harness must not seal that program's scratch region
# (Linux 6.10 and later) but put it at the guarded window, and the program reaches the device
# as usual. rxp_harness_testee filter-exec installs the filter and execs the program.
# kill-seccomp: the filter kills seccomp(2) callers too (it lets no further filter in), so the
# harness's device filter must be in place before the program's own filter.
testee=$RXP_BUILD/tools/harness/rxp_harness_testee
devinfo=$(command -v ibv_devinfo)
native=$("$devinfo" -d "$RXP_NODE0_DEV")
for action in kill trap errno kill-seccomp; do
  got=$(rxp_run -- "$testee" filter-exec "$action" seccomp "$devinfo" -d "$RXP_NODE0_DEV" 2>"$err") ||
    { echo "ibv_devinfo under a filter that ${action}s mseal: status $? ($(cat "$err"))" >&2; exit 1; }
  [[ $got == "$native" ]] ||
    { echo "ibv_devinfo under a filter that ${action}s mseal differs from native:" >&2
      diff <(echo "$native") <(echo "$got") >&2 || true; exit 1; }
  # rxp_own_seccomp_filter installs a filter itself, which kill-seccomp forbids (natively too).
  [[ $action == kill-seccomp ]] && continue
  got=$(rxp_run -- "$testee" filter-exec "$action" prctl "$prog" "$RXP_NODE0_DEV" 0 2>&1)
  grep -qx "alloc_pd ok" <<<"$got" ||
    { echo "ALLOC_PD under a filter that ${action}s mseal: '$got'" >&2; exit 1; }
  ! grep -q "scratch region" <<<"$got$(cat "$err")" ||
    { echo "the scratch region failed under a filter that ${action}s mseal: $got $(cat "$err")" >&2; exit 1; }
done
echo "a filter that kills, traps or refuses mseal (or kills seccomp too): ibv_devinfo as natively, ALLOC_PD proxied"
# Every verb under a filter that kills seccomp callers: the output equals native's.
exercise=$RXP_BUILD/tests/conformance/rxp_verbs_exercise
native=$("$testee" filter-exec kill-seccomp seccomp "$exercise" "$RXP_NODE0_DEV" "$RXP_NODE0_GID")
got=$(rxp_run -- "$testee" filter-exec kill-seccomp seccomp "$exercise" "$RXP_NODE0_DEV" \
  "$RXP_NODE0_GID" 2>"$err") ||
  { echo "rxp_verbs_exercise under a filter that kills seccomp: status $? ($(cat "$err"))" >&2; exit 1; }
[[ $got == "$native" ]] ||
  { echo "rxp_verbs_exercise under a filter that kills seccomp differs from native:" >&2
    diff <(echo "$native") <(echo "$got") >&2 || true; exit 1; }
echo "rxp_verbs_exercise under a filter that kills seccomp: $(wc -l <<<"$got") lines, as natively"
