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
trap 'rm -f "$policy"' EXIT
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
