#!/usr/bin/env bash
# print-failed-tests.sh BUILD_DIR [LINES]: after a failed ctest run, prints the output of
# every failed test again (its last LINES lines, default 120), read from CTest's own
# Testing/Temporary/LastTest.log. `ctest --output-on-failure` prints it when the test ends,
# somewhere in the middle of a long parallel run; scripts/test.sh calls this so that the
# reasons are also the last thing a run prints, where a CI log excerpt finds them.
set -uo pipefail
build=${1:?usage: print-failed-tests.sh BUILD_DIR [LINES]}
lines=${2:-120}
log=$build/Testing/Temporary/LastTest.log
failed=$build/Testing/Temporary/LastTestsFailed.log
[[ -f "$failed" ]] || { echo "(no failed-test list in $build)"; exit 0; }
[[ -f "$log" ]] || { echo "(no $log)"; exit 0; }

echo "== output of each failed test ($build) =="
# LastTestsFailed.log holds "NUMBER:NAME" lines.
while IFS= read -r entry; do
  name=${entry#*:}
  [[ -n "$name" ]] || continue
  echo "---- $name (last $lines lines of its output) ----"
  # A test's block runs from "N/M Testing: NAME" to '"NAME" end time: ...': its command, its
  # output (between "Output:" and "<end of output>") and its verdict.
  awk -v name="$name" '
    $0 ~ /^[0-9]+\/[0-9]+ Testing: / { sub(/^[0-9]+\/[0-9]+ Testing: /, ""); inside = ($0 == name); next }
    !inside { next }
    index($0, "\"" name "\" end time:") == 1 { inside = 0; next }
    { print }
  ' "$log" | tail -n "$lines"
done < "$failed"
echo "---- end of failed tests ----"
