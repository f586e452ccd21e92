#!/bin/bash
# run_transparency_test.sh RDMAPROXY TESTEE: what a program sees under `rdmaproxy run` (on the build
# host, every host device allowed: the default) is what it sees natively, where the two could
# part: whether /dev/infiniband and the RDMA sysfs classes exist (none on a host without RDMA:
# no empty stand-ins), with a relative TMPDIR after the program changed directory; how a program
# that cannot start ends (a script without "#!" runs under /bin/sh as env(1) runs it; a PATH
# match that cannot be run is 126, as env gives); pwd and ".." in a redirected directory; that a
# nested run says why it fails; a lowered RLIMIT_NOFILE; and that a seccomp allow-list that predates mseal(2) -- the
# program's own, or one the harness itself runs under -- does not kill anything for the seal
# the harness uses (TESTEE: the harness tests' rxp_harness_testee, whose filter-exec installs
# such a filter).
set -euo pipefail
rxp=${1:?usage: run_transparency_test.sh RDMAPROXY TESTEE}
testee=${2:?usage: run_transparency_test.sh RDMAPROXY TESTEE}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"

# exists_all: one line per RDMA path, whether it exists, after a cd elsewhere.
probe='cd /; for p in /dev/infiniband /sys/class/infiniband /sys/class/infiniband_verbs /sys/class/infiniband_mad; do if [ -e "$p" ]; then echo "$p yes"; else echo "$p no"; fi; done'
native=$(bash -c "$probe")
proxied=$("$rxp" run -- bash -c "$probe")
[[ $native == "$proxied" ]] || fail "RDMA paths differ: native [$native], proxied [$proxied]"
mkdir tmpd
relative=$(TMPDIR=tmpd "$rxp" run -- bash -c "$probe")
[[ $native == "$relative" ]] || fail "with TMPDIR=tmpd: native [$native], proxied [$relative]"
[[ -z $(ls -A tmpd) ]] || fail "a device view was left in the relative TMPDIR"
echo "RDMA paths as natively (also with a relative TMPDIR): $(tr '\n' ',' <<<"$native")"

# A cwd inside a redirected directory: pwd (getcwd) names it as natively, and ".." from it is
# the real parent, not the harness's view.
cwd_probe='for d in /dev/infiniband /sys/class/infiniband; do [ -d "$d" ] || continue; (cd "$d" && /bin/pwd && ls .. | head -50); done'
native=$(bash -c "$cwd_probe")
proxied=$("$rxp" run -- bash -c "$cwd_probe")
[[ $native == "$proxied" ]] || fail "a cwd in a redirected directory: native [$native], proxied [$proxied]"
echo "a cwd in a redirected directory: pwd and .. as natively ($(grep -c ^/ <<<"$native") such directories here)"

# `ulimit -n 256` lowers the hard RLIMIT_NOFILE below the reserved fd range's end, which the
# harness keeps in the kernel: the shell still reads the limit it set, and may not raise it
# again where it lacks CAP_SYS_RESOURCE (as natively; with it, both succeed).
nofile_probe='ulimit -n 256; ulimit -Hn; ulimit -Sn; (ulimit -Hn 512 2>/dev/null && echo raised || echo refused); ulimit -Hn; bash -c "ulimit -Hn"'
native=$(bash -c "$nofile_probe")
proxied=$("$rxp" run -- bash -c "$nofile_probe")
[[ $native == "$proxied" ]] || fail "a lowered RLIMIT_NOFILE: native [$native], proxied [$proxied]"
echo "a lowered RLIMIT_NOFILE reads and binds as natively: $(tr '\n' ',' <<<"$native")"

# A script without "#!": env(1) (execvp) runs it with /bin/sh.
printf 'echo "script ran: $*"\n' >noshebang
chmod +x noshebang
want=$(env ./noshebang a b)
got=$("$rxp" run -- ./noshebang a b) || fail "a script without #!: status $?"
[[ $got == "$want" ]] || fail "a script without #!: '$got', want '$want'"
echo "a script without #! ran under /bin/sh, as under env"

# A PATH match that cannot be run, and no runnable one: 126 (env says "Permission denied").
mkdir bin1 bin2
printf '#!/bin/sh\necho tool ran\n' >bin1/tool
rc=0; PATH=$work/bin1 "$rxp" run -- tool 2>err || rc=$?
((rc == 126)) || fail "a non-executable PATH match: status $rc, want 126 ($(cat err))"
grep -q "Permission denied" err || fail "a non-executable PATH match: $(cat err)"
# A runnable match later in PATH is taken, as execvp does.
cp bin1/tool bin2/tool && chmod +x bin2/tool
[[ $(PATH=$work/bin1:$work/bin2 "$rxp" run -- tool) == "tool ran" ]] ||
  fail "a runnable match after a non-executable one was not run"
rc=0; PATH=$work/none "$rxp" run -- tool 2>err || rc=$?
((rc == 127)) || fail "no match in PATH: status $rc, want 127"
echo "PATH: not runnable 126, runnable later match taken, none 127"

# rdmaproxy run inside rdmaproxy run: refused, and the reason names the outer tracer.
# (An ASan build's LeakSanitizer ptrace-attaches at exit, which the outer harness refuses: the
# inner run does without it.)
rc=0; ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$rxp" run -- "$rxp" run -- true 2>err || rc=$?
((rc == 2)) || fail "nested run: status $rc, want 2"
grep -q "itself traced" err || fail "nested run: the reason does not say it is traced: $(cat err)"
echo "a nested run is refused and says why"

# A filter that answers mseal with death: the program's own (installed inside the harness,
# before exec) and one the harness starts under. Natively nothing calls mseal.
for action in kill trap errno; do
  got=$("$rxp" run -- "$testee" filter-exec "$action" seccomp /bin/echo hello 2>err) ||
    fail "own filter ($action on mseal): status $? ($(cat err))"
  [[ $got == hello ]] || fail "own filter ($action on mseal): '$got'"
  ! grep -q "scratch region" err || fail "own filter ($action on mseal): $(cat err)"
  got=$("$testee" filter-exec "$action" prctl "$rxp" run -- /bin/echo hello 2>err) ||
    fail "the harness under a filter ($action on mseal): status $? ($(cat err))"
  [[ $got == hello ]] || fail "the harness under a filter ($action on mseal): '$got'"
done
# One that kills seccomp(2) too: the harness's filters that the program may need later went in
# ahead of it (the guard filter of the window, for the program it execs).
got=$("$rxp" run -- "$testee" filter-exec kill-seccomp seccomp /bin/echo hello 2>err) ||
  fail "own filter (kill on mseal and seccomp): status $? ($(cat err))"
[[ $got == hello ]] || fail "own filter (kill on mseal and seccomp): '$got'"
echo "a filter that kills, traps or refuses mseal, the program's or the harness's: runs as natively"
echo "a filter of the program's own that kills seccomp too: runs as natively"
