#!/bin/bash
# run_fuzzer.sh NAME FUZZER OUT_DIR [libFuzzer args...]: runs one libFuzzer target for CTest.
#
# The fuzzer's own output (tens of thousands of NEW/REDUCE lines) goes to OUT_DIR/NAME.log, and
# what is printed is short: the seed, the final stats and, on failure, the diagnosis last -- how
# the fuzzer ended (a signal by name), its error report (ASan, UBSan, libFuzzer's deadly-signal,
# timeout and out-of-memory reports) and the input that failed, dumped and kept in OUT_DIR/NAME/
# with the command that replays it. A CI log that keeps only the end of a test's output then still
# shows why it failed.
set -uo pipefail
name=${1:?usage: run_fuzzer.sh NAME FUZZER OUT_DIR [ARGS...]}
fuzzer=${2:?usage: run_fuzzer.sh NAME FUZZER OUT_DIR [ARGS...]}
out=${3:?usage: run_fuzzer.sh NAME FUZZER OUT_DIR [ARGS...]}
shift 3
artifacts=$out/$name  # this target's own: the targets run in parallel
mkdir -p "$artifacts"
log=$out/$name.log
rm -f "$artifacts"/{crash,leak,timeout,oom,slow-unit}-*

"$fuzzer" -artifact_prefix="$artifacts/" -print_funcs=0 "$@" >"$log" 2>&1
rc=$?

grep -E '^INFO: Seed:|INITED|^Done |^stat::' "$log"
if ((rc == 0)); then
  echo "$name: passed ($(grep -c -E '^#[0-9]+' "$log") progress lines in $log)"
  exit 0
fi

echo "=== $name FAILED: exit status $rc"
if ((rc > 128)); then
  echo "=== killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo '?'))" \
       "-- SIGKILL with no report below is an outside kill, e.g. the kernel's OOM killer"
fi
echo "=== the last lines of $log:"
tail -n 15 "$log"
# The report itself, from its first line: ASan/UBSan/LSan, or libFuzzer's own.
first=$(grep -n -m1 -E '==[0-9]+==ERROR|ERROR: libFuzzer|runtime error:|^ALARM:|LeakSanitizer|out-of-memory' \
        "$log" | cut -d: -f1)
if [[ -n $first ]]; then
  echo "=== the report (from line $first of $log):"
  sed -n "${first},$((first + 80))p" "$log"
else
  echo "=== no sanitizer or libFuzzer report in $log"
fi
shopt -s nullglob
for input in "$artifacts"/{crash,leak,timeout,oom,slow-unit}-*; do
  echo "=== failing input $input ($(stat -c %s "$input") bytes); replay: $fuzzer $input"
  od -A x -t x1 -v "$input" | sed -n 1,32p
done
exit 1
