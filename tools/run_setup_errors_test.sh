#!/bin/bash
# run_setup_errors_test.sh RDMAPROXY SOURCE_ROOT: `rdmaproxy run` on the build host (no RDMA
# needed) fails before the program starts, with status 2 and one line naming the option and
# the errno, for a policy or a rendered /sys it cannot use (docs/user-guide.md: "2 with one
# line on stderr when rdmaproxy run cannot start it"), and with status 2 for a usage error; and
# the user guide's own example policy is accepted as it is printed there.
set -euo pipefail
rxp=${1:?usage: run_setup_errors_test.sh RDMAPROXY SOURCE_ROOT}
src=${2:?usage: run_setup_errors_test.sh RDMAPROXY SOURCE_ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# refused WANT_PATTERN ARGS...: status 2, exactly one stderr line matching WANT_PATTERN, and
# the program (which would create $work/ran) never started.
refused() {
  local want=$1 rc=0
  shift
  timeout 60 "$rxp" run "$@" -- touch "$work/ran" 2>"$work/err" || rc=$?
  ((rc == 2)) || fail "run $*: status $rc, want 2 ($(cat "$work/err"))"
  [[ $(wc -l <"$work/err") == 1 ]] || fail "run $*: not one line: $(cat "$work/err")"
  grep -Eq "^rdmaproxy: $want" "$work/err" || fail "run $*: '$(cat "$work/err")' does not match '$want'"
  [[ ! -e $work/ran ]] || fail "run $*: the program ran"
  echo "refused: $*: $(cat "$work/err")"
}

refused "--policy $work/none.json: ENOENT" --policy "$work/none.json"
refused "--policy $work: EISDIR" --policy "$work"
: >"$work/empty.json"
refused "--policy $work/empty.json: .*not valid JSON" --policy "$work/empty.json"
mkfifo "$work/fifo"
refused "--policy $work/fifo: EINVAL: .*not a regular file" --policy "$work/fifo"  # not waited on
refused "--policy /dev/zero: EINVAL" --policy /dev/zero                             # nor read on
# An empty value (an unset shell variable) is an error, never the default ("all devices").
refused "--policy: empty value" --policy ""
refused "--devices: empty value" --devices ""
refused "--devices: empty value" --devices " "
refused "--sysfs-dir: empty value" --sysfs-dir ""
refused "--sysfs: empty value" --sysfs ""
refused "--trace=: empty file name" --trace=
echo '{"version": 1, "deny": ["NO.SUCH_METHOD"]}' >"$work/unknown.json"
refused "--policy $work/unknown.json: .*NO.SUCH_METHOD" --policy "$work/unknown.json"
echo '{"version": 1, "allow": ["INVOKE_WRITE REG_MR"], "deny": ["REG_MR"]}' >"$work/both.json"
refused "--policy $work/both.json: .*both allowed and denied" --policy "$work/both.json"
echo '{"version": 1, "deny": ["REG_MR"], "deny": []}' >"$work/twice.json"
refused "--policy $work/twice.json: EINVAL: .*key \"deny\" appears twice" --policy "$work/twice.json"
head -c $((1024 * 1024 + 1)) /dev/zero >"$work/big.json"
refused "--policy $work/big.json: EFBIG" --policy "$work/big.json"
refused "--sysfs-dir $work/none: ENOENT" --sysfs-dir "$work/none"
refused "--sysfs: ENOENT: open $work/none.json" --sysfs "$work/none.json"
refused "--trace $work/none/trace: ENOENT" --trace="$work/none/trace"
refused "--sysfs-dir $work/unknown.json: ENOTDIR" --sysfs-dir "$work/unknown.json"

# A run that cannot start leaves the last run's --trace file as it was, and creates none; one
# that starts replaces it.
echo "the last run's trace" >"$work/trace"
refused "--policy $work/none.json: ENOENT" --trace="$work/trace" --policy "$work/none.json"
[[ $(cat "$work/trace") == "the last run's trace" ]] || fail "a failed set-up changed the trace file"
refused "--policy $work/none.json: ENOENT" --trace="$work/new-trace" --policy "$work/none.json"
[[ ! -e $work/new-trace ]] || fail "a failed set-up left a trace file behind"
"$rxp" run --trace="$work/trace" -- true || fail "run --trace=FILE -- true: status $?"
! grep -q "the last run's trace" "$work/trace" || fail "a started run kept the old trace"
echo "--trace=FILE: kept when the set-up fails, replaced when the run starts"

# Usage errors exit 2 as well (never CLI11's 105-109, which a script could take for the
# program's own status), and the program does not start.
usage_error() {
  local rc=0
  "$rxp" "$@" 2>"$work/err" || rc=$?
  ((rc == 2)) || fail "$*: status $rc, want 2 ($(cat "$work/err"))"
  [[ -s $work/err ]] || fail "$*: nothing said on stderr"
  [[ ! -e $work/ran ]] || fail "$*: the program ran"
  echo "usage error: $*: $(head -n1 "$work/err")"
}
usage_error run --no-such-option -- touch "$work/ran"
usage_error run --stop-poll-us abc -- touch "$work/ran"
usage_error run
usage_error no-such-command
"$rxp" --help >/dev/null || fail "--help: status $?, want 0"

# The example policy of docs/user-guide.md, exactly as printed (the first ```json block).
awk '/^```json$/ {on = 1; next} on && /^```$/ {exit} on' "$src/docs/user-guide.md" >"$work/guide.json"
[[ -s $work/guide.json ]] || fail "no JSON policy example in docs/user-guide.md"
"$rxp" run --policy "$work/guide.json" -- touch "$work/ran" ||
  fail "the user guide's example policy is refused"
[[ -e $work/ran ]] || fail "the program did not run under the user guide's example policy"
echo "the user guide's example policy is accepted"
