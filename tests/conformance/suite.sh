#!/bin/bash
# The conformance suite: real rdma-core programs run natively and under `rdmaproxy run`, on the
# same devices, one after the other; their exit status and key output fields must agree.
#
#   tests/conformance/suite.sh [--build DIR] [--node0 DEV:GID_INDEX:IP] [--node1 ...]
#                              [--run-opts "OPTIONS"] [--rdma-core BUILD] [--rdmaproxy CLI]
#                              [--list] [CASE...]
#
# Runs every case (or the ones named) and prints one line per case -- PASS, FAIL or SKIP with
# the figures compared -- then a summary; exits 1 if any case failed.
#
# Where it runs:
#  - in the soft-RoCE VM test bed (tests/vm: vm.conformance.<case>), where node0 and node1 are
#    two rxe devices on the two ends of a veth pair (the test bed exports RXP_NODE{0,1}_*);
#  - on a real RDMA host (mlx5, ...), as root or a user allowed to use the devices and ptrace
#    its own children: `tests/conformance/suite.sh --build build`. Without --node0/--node1 it
#    picks the first device with an active port and a RoCE v2 IPv4 GID (or an InfiniBand port,
#    using its IPoIB address for rdma_cm) and runs each client/server pair on that device in
#    loopback; give --node1 a second device or port to cross the wire.
#
# --rdma-core BUILD runs every program, natively and proxied, with another rdma-core: BUILD is
# an in-place build of an rdma-core source tree (its build.sh, or cmake -DIN_PLACE=1); its bin/
# goes first on PATH and its lib/ first on LD_LIBRARY_PATH (perftest and the project's programs
# then load its libibverbs and providers too).
#
# --rdmaproxy CLI runs the proxied side with another `rdmaproxy` than BUILD's: an installed one
# (/usr/bin/rdmaproxy from the .deb) or a sanitized build's (docs/development.md); the suite's
# own programs still come from BUILD.
#
# Servers listen on TCP ports from RXP_SUITE_PORT (default 18600) upwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
# shellcheck source=diagnose.sh
source "$here/diagnose.sh"
# shellcheck source=nodes.sh
source "$here/nodes.sh"
node0=${RXP_NODE0_DEV:+$RXP_NODE0_DEV:$RXP_NODE0_GID:$RXP_NODE0_IP}
node1=${RXP_NODE1_DEV:+$RXP_NODE1_DEV:$RXP_NODE1_GID:$RXP_NODE1_IP}
run_opts="--stats"
rdma_core=
rdmaproxy_cli=
cases=()
list_only=0
while (($#)); do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --node0) node0=$2; shift 2 ;;
    --node1) node1=$2; shift 2 ;;
    --run-opts) run_opts=$2; shift 2 ;;
    --rdma-core) rdma_core=$(cd "$2" && pwd); shift 2 ;;
    --rdmaproxy) rdmaproxy_cli=$2; shift 2 ;;
    --list) list_only=1; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "suite: unknown option $1" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done

all_cases=(devices devinfo ibstat rc_pingpong rc_pingpong_events rc_pingpong_new_send uc_pingpong ud_pingpong srq_pingpong
           xsrq_pingpong write_bw write_bw_cm write_bw_qps read_bw send_bw send_bw_events atomic_bw
           send_bw_ud write_bw_uc send_bw_xrc send_bw_srq write_bw_bidir send_bw_inline write_lat send_lat
           read_lat atomic_lat rping rping_ipv6 rping_netns ucmatose udaddy mckey rdma_client rstream riostream cmtime qperf ucx_perftest libfabric verbs_exercise
           verbs_processes hostile netlink rdma_core_tests)
if ((list_only)); then printf '%s\n' "${all_cases[@]}"; exit 0; fi
if [[ -n $rdma_core ]]; then
  [[ -x $rdma_core/bin/ibv_devinfo && -e $rdma_core/lib/libibverbs.so.1 ]] ||
    { echo "suite: $rdma_core is not an in-place rdma-core build (no bin/ibv_devinfo, lib/libibverbs.so.1)" >&2; exit 2; }
  export PATH=$rdma_core/bin:$PATH
  export LD_LIBRARY_PATH=$rdma_core/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
((${#cases[@]})) || cases=("${all_cases[@]}")

RDMAPROXY=$build/tools/rdmaproxy
if [[ -n $rdmaproxy_cli ]]; then
  RDMAPROXY=$(command -v "$rdmaproxy_cli") || { echo "suite: no rdmaproxy at $rdmaproxy_cli" >&2; exit 2; }
fi
EXERCISE=$build/tests/conformance/rxp_verbs_exercise
PROCESSES=$build/tests/conformance/rxp_verbs_processes
HOSTILE=$build/tests/conformance/rxp_hostile
PROBE=$build/tests/conformance/rxp_netlink_probe
for f in "$RDMAPROXY" "$EXERCISE" "$PROCESSES" "$HOSTILE" "$PROBE"; do
  [[ -x $f ]] || { echo "suite: no $f (build first: cmake --build $build)" >&2; exit 2; }
done

# ---- the nodes -------------------------------------------------------------------------------

if [[ -z $node0 ]]; then
  node0=$(detect_node) || { echo "suite: no RDMA device with an active port (give --node0)" >&2; exit 2; }
fi
[[ -n $node1 ]] || node1=$node0
IFS=: read -r DEV0 GID0 IP0 <<<"$node0"
IFS=: read -r DEV1 GID1 IP1 <<<"$node1"
echo "suite: node0 $DEV0 (GID $GID0, $IP0), node1 $DEV1 (GID $GID1, $IP1); $RDMAPROXY run $run_opts${rdma_core:+; rdma-core from $rdma_core}"

# ---- helpers ---------------------------------------------------------------------------------

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=${RXP_SUITE_PORT:-18600}
passed=0 failed=0 skipped=0

pass() { echo "PASS $1: $2"; passed=$((passed + 1)); }
# difference TEXT1 TEXT2: their diff, head only (no process substitution: the VM guest has no
# /dev/fd).
difference() {
  printf '%s\n' "$1" >"$work/diff.a"
  printf '%s\n' "$2" >"$work/diff.b"
  diff "$work/diff.a" "$work/diff.b" | sed -n 1,30p
}
# Each failure's line is repeated under the summary, the suite's last lines: a report that keeps
# only the end of the output (CI's excerpt of a failed test) still names every failure.
failures=()
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); failures+=("FAIL $1: $2"); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }

# The words that run a command under the harness, with the run options; runners prefix their
# commands with "${pre[@]}" (empty natively).
read -r -a PROXY <<<"$RDMAPROXY run $run_opts --"
proxied() { "${PROXY[@]}" "$@"; }
prefix_for() {  # prefix_for WRAP: sets pre=() natively, pre=(rdmaproxy run ...) for "proxied"
  pre=()
  if [[ $1 == proxied ]]; then pre=("${PROXY[@]}"); fi
}

# wait_tcp PORT PID / wait_cm PORT PID: until something listens on TCP port PORT / an rdma_cm
# id listens on port PORT (not any listener: a real host may have its own, NFS over RDMA's
# kernel listener on 20049 for one), for at most 30 s of wall time; fails at once when PID (the
# server) has exited -- a server that refuses to start (XRC on a device without it) must not
# cost the whole wait.
# wait_until PID CHECK...: until CHECK succeeds (0), PID has gone or 30 s have passed (1);
# WAIT_SECS=N for another limit.
wait_until() {
  local pid=$1 deadline=$((SECONDS + ${WAIT_SECS:-30})); shift
  while ((SECONDS < deadline)); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
tcp_listening() { grep -q . <<<"$(ss -Hltn "sport = :$1" 2>/dev/null)"; }
# `rdma resource show cm_id` prints "... state LISTEN ... src-addr ADDR:PORT dst-addr ..." for
# IPv4 and IPv6 alike (iproute2's res-cmid.c).
cm_listening() {
  grep -qE "state LISTEN .*src-addr [^ ]*:$1( |\$)" <<<"$(rdma resource show cm_id 2>/dev/null)"
}
wait_tcp() { wait_until "$2" tcp_listening "$1"; }
wait_cm() { wait_until "$2" cm_listening "$1"; }

# A run that hangs must say where: an intermittent hang seen once in a full run (a proxied
# client that printed its results and never exited) left nothing but its output to go on.
# snapshot_tree PID: every task of PID's process tree (the harness and the program under it),
# with its state, what it sleeps in, its syscall, tracer and pending signals, and kernel stack.
descendants() {  # descendants PID: PID and every process below it, on one line
  local c
  printf '%s ' "$1"
  for c in $(pgrep -P "$1"); do descendants "$c"; done
}
snapshot_tree() {
  local p t
  for p in $(descendants "$1"); do
    # (2> before <: a process gone since it was listed has no cmdline, and says nothing.)
    echo "process $p: $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")"
    for t in /proc/"$p"/task/*; do
      [[ -e $t/stat ]] || continue
      echo "  task ${t##*/}: state $(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)," \
        "wchan $(cat "$t/wchan" 2>/dev/null), syscall $(cat "$t/syscall" 2>/dev/null)," \
        "$(grep -E '^TracerPid|^SigPnd|^ShdPnd|^SigBlk' "$t/status" 2>/dev/null | tr -s '\t\n' '  ')"
      sed 's/^/    /' "$t/stack" 2>/dev/null | sed -n 1,16p
    done
    echo "  fds: $(ls -l "/proc/$p/fd" 2>/dev/null | awk 'NR > 1 {printf "%s->%s ", $9, $11}')"
    queue_indexes "$p"
  done
}
# queue_indexes PID: where each of PID's queues mapped from a uverbs fd stands. A program that
# spins polling for a completion (the hang above) is then told apart: a CQ whose producer index
# is ahead of its consumer holds completions the program has not read; equal indexes mean the
# kernel never posted one; a send queue whose kernel consumer lags its producer holds work the
# driver has not started. The header is rxe's (struct rxe_queue_buf, rdma/rdma_user_rxe.h:
# log2_elem_size, index_mask, producer_index at byte 128, consumer_index at 256); a mapping
# that does not look like one (another driver's, whose device pages a read of /proc/PID/mem
# does not reach) is listed without indexes. The file offset is the one the CREATE_CQ/CREATE_QP
# response in a --trace names (mi offset).
queue_indexes() {
  local p=$1 range perms off dev inode path start end words
  # Quiet: a process that exited since it was listed has no maps, nothing to say about it.
  {
    while read -r range perms off dev inode path; do
      [[ $path == /dev/infiniband/uverbs* ]] || continue
      start=$((16#${range%-*})) end=$((16#${range#*-}))
      # One read of the header's first 260 bytes; words 0, 1, 32 and 64 are the four fields.
      read -r -a words <<<"$(dd if="/proc/$p/mem" bs=260 count=1 skip="$start" iflag=skip_bytes \
        2>/dev/null | od -An -tu4 -v | tr -s ' \n' '  ')"
      if ((${#words[@]} == 65)); then
        words=("${words[0]}" "${words[1]}" "${words[32]}" "${words[64]}")
      else
        words=()
      fi
      if ((${#words[@]} == 4 && words[0] >= 4 && words[0] <= 16 &&
        (words[1] & (words[1] + 1)) == 0 && words[1] > 0 && words[1] < (1 << 24) &&
        (1 << words[0]) * (words[1] + 1) < end - start)); then
        echo "  queue $range ($path, offset 0x$off): $((words[1] + 1)) entries of" \
          "$((1 << words[0])) bytes, producer ${words[2]}, consumer ${words[3]}"
      else
        echo "  mapping $range ($path, offset 0x$off, $perms): not an rxe queue"
      fi
    done <"/proc/$p/maps"
  } 2>/dev/null || true
}
retransmissions() {  # every port's count of retransmitted requests ("rxe0/1 12 rxe1/1 0"), or -
  local f n out=()
  for f in /sys/class/infiniband/*/ports/*/hw_counters/completer_retry_err; do
    [[ -r $f ]] || continue
    n=${f#/sys/class/infiniband/}
    out+=("${n%%/*}/$(cut -d/ -f3 <<<"$n") $(cat "$f" 2>/dev/null)")
  done
  echo "${out[*]:--}"
}
term_tree() {  # term_tree PID: TERM to PID and its descendants
  local -a tree
  read -r -a tree <<<"$(descendants "$1")"
  kill -TERM "${tree[@]}" 2>/dev/null
}
# limited SECS DUMP CMD...: `timeout SECS CMD...` (status 124 when time ran out), except that
# before the TERM (to CMD's whole process tree) it writes snapshot_tree of CMD to DUMP; what is
# left when CMD has gone, or 5 s later, gets KILL.
# RXP_SUITE_TIMEOUT (seconds) replaces every SECS, to try this out on a case.
limited() {
  local secs=${RXP_SUITE_TIMEOUT:-$1} dump=$2 pid watch rc=0
  shift 2
  rm -f "$dump"
  "$@" <&0 &
  pid=$!
  # Run in the background (a server), this shell is what a TERM reaches: pass it on to the
  # program and its children, as timeout does.
  [[ $BASHPID == "$$" ]] || trap 'term_tree "$pid"' TERM
  {
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    sleep "$secs" &
    nap=$!
    wait "$nap"
    kill -0 "$pid" 2>/dev/null || exit 0
    # From here on this shell finishes its work (a trap run in the middle of a command
    # substitution trips bash 5.2's parser); the caller waits for it.
    trap '' TERM
    read -r -a tree <<<"$(descendants "$pid")"
    snapshot_tree "$pid" >"$dump" 2>&1
    # The QPs' and CQs' states at that moment: a program polling for a completion that never
    # comes (the hang above) shows where its QP stands.
    { echo "rdma resource show qp:"; rdma resource show qp 2>&1 | sed 's/^/  /'
      echo "rdma resource show cq:"; rdma resource show cq 2>&1 | sed 's/^/  /'
      # Whether a QP is resending a request that was never acknowledged (rxe retransmits on its
      # ACK timer, forever with retry_cnt 7: the driver never decrements 7, rxe_completer):
      # the devices' retransmission counters, now and 5 s later.
      echo "retransmissions (hw_counters/completer_retry_err), 5 s apart: $(retransmissions) /" \
        "$(sleep 5; retransmissions)"; } >>"$dump"
    # The whole tree, as timeout signals its process group; then KILL to what is left.
    kill -TERM "${tree[@]}" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${tree[@]}" 2>/dev/null
    exit 0
  } &
  watch=$!
  wait "$pid" || rc=$?
  # A TERM passed on (the trap) ends that wait early: wait for the program's own status (127
  # when the first wait had it already).
  if ((rc > 128)); then
    local again=0
    wait "$pid" || again=$?
    ((again == 127)) || rc=$again
  fi
  kill "$watch" 2>/dev/null
  wait "$watch" 2>/dev/null
  [[ -e $dump ]] && rc=124
  return "$rc"
}

# pair TAG WAIT SERVER... ::: CLIENT...: the server in the background, the client once the
# server is ready (WAIT: tcp:PORT or cm:PORT), both outputs in $work/TAG.{server,client};
# fails if either side failed or timed out (120 s; then TAG.{server,client}.hang say where each
# side was). (":::", because the commands contain "--".)
pair() {
  local tag=$1 wait=$2; shift 2
  local -a server=() client=()
  while (($#)) && [[ $1 != ::: ]]; do server+=("$1"); shift; done
  shift
  client=("$@")
  limited 120 "$work/$tag.server.hang" "${server[@]}" >"$work/$tag.server" 2>&1 &
  local spid=$! src=0 crc=0 ready=1
  case $wait in
    tcp:*) wait_tcp "${wait#tcp:}" "$spid" || ready=0 ;;
    cm:*) wait_cm "${wait#cm:}" "$spid" || ready=0 ;;
  esac
  if ((ready)); then
    limited 120 "$work/$tag.client.hang" "${client[@]}" >"$work/$tag.client" 2>&1 || crc=$?
    # A client that lost perftest's -R race (relisten_race) is gone, and the server would wait
    # for its connection until the 120 s limit (219 s instead of 76 s for write_bw_cm in one
    # run): end the server now (a TERM, which limited passes on). retry_run repeats such a run.
    ((crc == 0)) || ! relisten_race "$tag" || kill "$spid" 2>/dev/null
  else
    : >"$work/$tag.client"
    kill "$spid" 2>/dev/null
  fi
  wait "$spid" || src=$?
  ((ready || src != 0)) || src=124  # never ready, yet it "succeeded": count it as a timeout
  echo "$src $crc" >"$work/$tag.status"
  ((src == 0 && crc == 0))
}

show() {  # show TAG: both sides' output, for a failure's post-mortem
  local f
  for f in "$work/$1".server "$work/$1".client; do
    [[ -s $f ]] || continue
    # stderr is unbuffered and lands above the program's buffered stdout: its error lines
    # first, then the tail.
    grep -E "Can't produce a report|Correlation coefficient|Couldn't|[Ff]ailed|[Ee]rror" "$f" |
      grep -v '^rdmaproxy: ' | sed -n 1,5p | sed "s|^|  $(basename "$f") (error): |"
    sed "s|^|  $(basename "$f"): |" "$f" | tail -n 15
    [[ -s $f.hang ]] && sed "s|^|  $(basename "$f") (timed out): |" "$f.hang" | sed -n 1,120p
  done
  return 0
}

# statuses CASE: the server and client exit statuses of both runs, for a failure's message.
statuses() {
  echo "exit statuses: native $(cat "$work/$1.native.status" 2>/dev/null || echo -), proxied $(cat "$work/$1.proxied.status" 2>/dev/null || echo -)"
}

# twice CASE RUNNER...: runs RUNNER native (tag CASE.native) and proxied (tag CASE.proxied);
# RUNNER gets the tag and the wrapper ("" or "proxied") and returns the pair's status.
twice() {
  local name=$1; shift
  "$@" "$name.native" "" && native_ok=1 || native_ok=0
  "$@" "$name.proxied" proxied && proxied_ok=1 || proxied_ok=0
}

# next_port: the next port, in $port (not echoed: a command substitution's subshell would keep
# the count to itself and hand every run the same port).
next_port() { port=$((port + 1)); }

# perftest cannot always calibrate its cycle counter on a loaded (emulated) CPU. It then prints
# "Correlation coefficient r^2: ... < 0.9" on stderr (so above the buffered stdout in a merged
# log; sample_get_cpu_mhz) and either quits with "Can't produce a report" (bandwidth tests) or,
# exiting 0, reports every latency as inf (latency tests divide by the zero clock rate). Either
# way the run measured nothing: it is repeated, up to 5 times, natively or proxied.
calibration_failed() {  # calibration_failed TAG
  grep -qsE "Can't produce a report|Correlation coefficient r\^2|^ *[0-9]+ +[0-9]+ +inf " \
    "$work/$1".server "$work/$1".client
}
# perftest's -R handshake races itself: the server listens again on its port for the test's QPs
# after the first connection, and a client that connects before that is rejected by the CM with
# reason 8 (no listener; docs/harness.md, "perftest's -R handshake"). The server's re-listen
# takes four stops under the proxy, which widens the window: such a run is repeated too. qperf
# with -cm1 can lose a connect between its tests the same way, natively too (seen once, on a
# loaded machine): "unexpected event from RDMA CM: Event rejected".
relisten_race() {  # relisten_race TAG
  grep -qs -e "RDMA_CM_EVENT_REJECTED; error: 8\." -e "unexpected event from RDMA CM: Event rejected" \
    "$work/$1".client
}
# The native run is the reference, not what is tested: one that fails for any other reason is
# also repeated. A proxied run is repeated only for the calibration failure, a qperf rate of 0
# (measured nothing too; case_qperf) and the -R race.
# Every repetition prints a `note:` line on stderr with the failed attempt's exit statuses.
retry_run() {  # retry_run TAG WRAP RUNNER ARGS...: RUNNER ARGS... TAG WRAP
  local tag=$1 wrap=$2 attempt attempts=5 why ok; shift 2
  for ((attempt = 1; attempt <= attempts; attempt++)); do
    "$@" "$tag" "$wrap" && ok=1 || ok=0
    if calibration_failed "$tag"; then
      why="perftest could not calibrate its clock"
    elif qperf_measured_nothing "$tag"; then
      why="a qperf test counted no completion in its window"
    elif ((!ok)) && relisten_race "$tag"; then
      why="the client connected before perftest's server listened again (-R race)"
    elif ((ok)); then
      return 0
    elif [[ -z $wrap ]]; then
      why="the reference run failed"
    else
      return 1
    fi
    echo "note: $tag: $why (server and client exit $(cat "$work/$tag.status"); attempt $attempt of $attempts)" >&2
    # The next attempt overwrites this one's hang dumps (limited): a side that timed out (a
    # native one, mostly) is kept in the log, to tell a kernel race from a test-bed fault later.
    # (The last attempt's are the failure's own, which show prints.)
    ((attempt == attempts)) || dump_to_log "$tag"
  done
  return 1  # every attempt failed or measured nothing
}
# repeat_lost_final_ack TAG WRAP RUNNER DIAGNOSIS [ARG...]: RUNNER TAG WRAP, run again (twice at
# most, each time with a note:) while `DIAGNOSIS ARG... TAG` finds that the pair failed only
# because the kernel dropped the ACK of its last message (diagnose.sh, lost_final_ack: Linux
# 6.1's rxe). Any other failure stands.
repeat_lost_final_ack() {
  local tag=$1 wrap=$2 runner=$3 attempt why
  shift 3
  for attempt in 1 2 3; do
    "$runner" "$tag" "$wrap" && return 0
    why=$("$@" "$tag") || return 1
    echo "note: $tag: $why (server and client exit $(cat "$work/$tag.status"); attempt $attempt of 3;" \
      "$(grep -h '^retransmissions' "$work/$tag".*.hang))" >&2
  done
  return 1
}
# dump_to_log TAG: the hang dumps of a run about to be repeated, each line prefixed with the
# file's name, on stderr.
dump_to_log() {
  local f
  for f in "$work/$1".server.hang "$work/$1".client.hang; do
    [[ -s $f ]] && sed "s|^|  $(basename "$f"): |" "$f" >&2
  done
  return 0
}
# twice_repeating CASE RUNNER ARGS...: twice, each run through retry_run.
twice_repeating() {
  local name=$1; shift
  retry_run "$name.native" "" "$@" && native_ok=1 || native_ok=0
  retry_run "$name.proxied" proxied "$@" && proxied_ok=1 || proxied_ok=0
}

# ---- cases -----------------------------------------------------------------------------------

# ibv_devices, in its order: libibverbs lists the devices in netlink's index order, natively
# and under the proxy (which answers the device list: netlink_answer.h); with --refuse-netlink
# in the readdir order of the served /sys/class/infiniband_verbs, which the harness keeps to
# the same index order (tools/harness/ordered_listing.h). A program that takes the first device
# gets the same one.
case_devices() {
  local native proxy
  native=$(ibv_devices 2>&1) || { fail devices "native ibv_devices failed"; return; }
  proxy=$(proxied ibv_devices 2>/dev/null) || { fail devices "ibv_devices failed under the proxy"; return; }
  if [[ $native == "$proxy" ]]; then
    pass devices "$(grep -c . <<<"$native") lines identical, in the same order"
  else
    fail devices "outputs differ"; difference "$native" "$proxy"
  fi
}

# ibstat (infiniband-diags): libibumad reads every CA and port attribute from /sys (node type,
# firmware and hardware versions, GUIDs, port state, rate, capability mask, link layer)
# without verbs; every line must match.
case_ibstat() {
  local native proxy
  if ! command -v ibstat >/dev/null; then skip ibstat "no ibstat here (Debian: infiniband-diags)"; return; fi
  native=$(ibstat 2>&1) || { fail ibstat "native ibstat failed: $(head -n 1 <<<"$native")"; return; }
  proxy=$(proxied ibstat 2>/dev/null)
  if [[ -n $native && $native == "$proxy" ]]; then
    pass ibstat "$(grep -c "^CA '" <<<"$native") CAs, $(grep -c . <<<"$native") lines identical"
  else
    fail ibstat "outputs differ"; difference "$native" "$proxy"
  fi
}

# ibv_devinfo -v, every device's block in the same order (as case_devices).
case_devinfo() {
  local native proxy
  native=$(ibv_devinfo -v 2>&1) || { fail devinfo "native failed"; return; }
  proxy=$(proxied ibv_devinfo -v 2>/dev/null)
  if [[ -n $native && $native == "$proxy" ]]; then
    pass devinfo "$(grep -c '^hca_id' <<<"$native") devices, $(grep -c . <<<"$native") lines identical, in the same order"
  else
    fail devinfo "outputs differ"; difference "$native" "$proxy"
  fi
}

# The client's "N bytes in S seconds = B Mbit/sec" and "I iters in ..." lines.
pingpong_summary() { grep -Eo '^[0-9]+ bytes in|^[0-9]+ iters in' "$1" | tr '\n' ' '; }

run_pingpong() {  # run_pingpong PROG EXTRA TAG WRAP
  local prog=$1 extra=$2 tag=$3 p
  local -a pre
  prefix_for "$4"
  next_port; p=$port
  pair "$tag" "tcp:$p" \
    "${pre[@]}" "$prog" -d "$DEV1" -g "$GID1" -p "$p" -n 100 $extra ::: \
    "${pre[@]}" "$prog" -d "$DEV0" -g "$GID0" -p "$p" -n 100 $extra "$IP1"
}
# failed_alike NAME SIDE [SKIP_RE]: both runs failed (say XRC on a device without it); passes
# when they failed the same way: SIDE's (client or server) first two lines, less the harness's
# own and lines matching SKIP_RE (which differ from run to run), and both sides' exit statuses.
failed_alike() {
  local name=$1 side=$2 skip="^rdmaproxy${3:+\|$3}" ne pe
  ne=$(grep -hv "$skip" "$work/$name.native.$side" 2>/dev/null | sed -n 1,2p)
  pe=$(grep -hv "$skip" "$work/$name.proxied.$side" 2>/dev/null | sed -n 1,2p)
  if [[ -n $ne && $ne == "$pe" && $(cat "$work/$name.native.status") == "$(cat "$work/$name.proxied.status")" ]]; then
    pass "$name" "fails natively and under the proxy alike: $(head -n1 <<<"$ne")"
  else
    fail "$name" "both failed, differently"; show "$name.native"; show "$name.proxied"
  fi
}
pingpong_case() {  # pingpong_case NAME PROG EXTRA
  local name=$1
  twice "$name" run_pingpong "$2" "$3"
  local n p
  n=$(pingpong_summary "$work/$name.native.client")
  p=$(pingpong_summary "$work/$name.proxied.client")
  # With -c the server checks the bytes it received and prints a line per bad page.
  local bad
  bad=$(grep -c 'invalid data in page' "$work/$name.native.server" "$work/$name.proxied.server" |
    grep -v ':0$' | sed 's|.*/||' | tr '\n' ' ')
  if [[ -n $bad ]]; then
    fail "$name" "the server found pages with invalid data (${bad% })"
  elif ((native_ok && proxied_ok)) && [[ -n $n && $n == "$p" ]]; then
    pass "$name" "native and proxied: $n"
  elif ((!native_ok && !proxied_ok)); then
    failed_alike "$name" client '^  local address\|^  remote address'
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok ($n / $p; $(statuses "$name"))"
    show "$name.native"; show "$name.proxied"
  fi
}
case_rc_pingpong() { pingpong_case rc_pingpong ibv_rc_pingpong ""; }
# -e: completions by event (a completion channel, ibv_req_notify_cq, ibv_get_cq_event blocking
# in read() on the channel fd, ibv_ack_cq_events).
case_rc_pingpong_events() { pingpong_case rc_pingpong_events ibv_rc_pingpong "-e"; }
# -N -c: the extended QP and rdma-core's newer work-request API (ibv_qp_ex, ibv_wr_start /
# ibv_wr_send / ibv_wr_complete: the QP created with CREATE_QP_EX and its send_ops_flags),
# and the server checks the bytes it received (-c: every page's first byte, which the client
# cleared, was 0x7b; it prints "invalid data in page N" for each that was not).
case_rc_pingpong_new_send() { pingpong_case rc_pingpong_new_send ibv_rc_pingpong "-N -c"; }
case_uc_pingpong() { pingpong_case uc_pingpong ibv_uc_pingpong ""; }
case_ud_pingpong() { pingpong_case ud_pingpong ibv_ud_pingpong "-s 512"; }
case_srq_pingpong() { pingpong_case srq_pingpong ibv_srq_pingpong ""; }
case_xsrq_pingpong() {
  local name=xsrq_pingpong
  run_xsrq() {
    local tag=$1 p
    local -a pre
    prefix_for "$2"
    next_port; p=$port
    pair "$tag" "tcp:$p" \
      "${pre[@]}" ibv_xsrq_pingpong -d "$DEV1" -g "$GID1" -p "$p" -n 50 ::: \
      "${pre[@]}" ibv_xsrq_pingpong -d "$DEV0" -g "$GID0" -p "$p" -n 50 "$IP1"
  }
  twice "$name" run_xsrq
  if ((native_ok && proxied_ok)); then
    pass "$name" "native and proxied completed"
  elif ((!native_ok && !proxied_ok)); then
    failed_alike "$name" server
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok ($(statuses "$name"))"; show "$name.native"; show "$name.proxied"
  fi
}

# perftest: "#bytes #iterations BW-peak BW-average MsgRate" (bw) or
# "#bytes #iterations t_min t_max t_typical t_avg t_stdev ..." (lat).
bw_row() { awk 'NF == 5 && $1 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {r = $0} END {print r}' "$1"; }
lat_row() { awk 'NF >= 7 && $1 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ {r = $0} END {print r}' "$1"; }
# perftest's QP ACK timeout (-u): 4.096 us * 2^20, about 4.3 s, instead of its default 14 (67 ms).
# An emulated guest under load often takes longer than 67 ms to acknowledge, and every such
# timeout makes rxe resend from the oldest unacknowledged packet although nothing was lost.
# Linux 6.1's rxe mishandles that retry path (its requester and completer run as concurrent
# tasklets; the path was reworked upstream in v6.10, not in 6.1.y): the responder NAKs an
# invalid request and the requester completes with REM_INV_REQ_ERR (status 9), natively at least
# as often as proxied. Measured in the 6.1 guest, a second guest loading the host, 16
# ib_write_bw -q 4 -n 250 pairs: with 14, about 760 timer retransmissions and 1 failure (a
# native run); with 20, about 20 and none. docs/development.md, "Linux 6.1's rxe under a slow
# guest". A real fabric acknowledges in microseconds, where neither value ever fires.
PERFTEST_QP_TIMEOUT=20
run_perftest() {  # run_perftest PROG EXTRA TAG WRAP
  local prog=$1 extra=$2 tag=$3 p wait
  local -a pre gid0=(-x "$GID0") gid1=(-x "$GID1")
  prefix_for "$4"
  next_port; p=$port
  wait=tcp:$p
  # -R: the QPs are connected over rdma_cm (perftest's rdma_cm.c): the server listens on a cm_id,
  # not a TCP socket, and the GID follows from the address.
  if [[ " $extra " == *" -R "* ]]; then wait=cm:$p gid0=() gid1=(); fi
  pair "$tag" "$wait" \
    "${pre[@]}" "$prog" -d "$DEV1" "${gid1[@]}" -p "$p" -u "$PERFTEST_QP_TIMEOUT" $extra ::: \
    "${pre[@]}" "$prog" -d "$DEV0" "${gid0[@]}" -p "$p" -u "$PERFTEST_QP_TIMEOUT" $extra "$IP1"
}
# A fixed number of iterations, not a duration (-D): on a loaded emulated machine a vCPU can
# stall for seconds, and a 2-second window may then see no completion at all; a count only
# takes longer.
bw_case() {  # bw_case NAME PROG ITERATIONS [EXTRA]
  local name=$1 prog=$2 iters=$3 extra=${4:+ $4}
  twice_repeating "$name" run_perftest "$prog" "-n $iters$extra"
  local n p
  n=$(bw_row "$work/$name.native.client")
  p=$(bw_row "$work/$name.proxied.client")
  if ((native_ok && proxied_ok)) && [[ -n $n && -n $p ]]; then
    local nb pb ni pi na pa nr pr
    read -r nb ni _ na nr <<<"$n"
    read -r pb pi _ pa pr <<<"$p"
    # Traffic moved under the proxy: iterations and the message rate (six decimals), not the
    # MB/s column, which perftest rounds to 0.00 for a slow small-message run on a loaded VM.
    if [[ $nb == "$pb" ]] && awk -v i="$pi" -v r="$pr" 'BEGIN { exit !(i > 0 && r > 0) }'; then
      pass "$name" "$(awk -v n="$nr" -v p="$pr" -v nm="$na" -v pm="$pa" -v b="$nb" 'BEGIN {
        printf "%s-byte messages: native %.6f Mpps (%.2f MB/s), proxied %.6f Mpps (%.2f MB/s) (%.2fx)",
               b, n, nm, p, pm, p / n }')"
    else
      fail "$name" "rows differ: '$n' / '$p'"
    fi
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok ($(statuses "$name")), rows '$n' / '$p'"
    show "$name.native"; show "$name.proxied"
  fi
}
# 64 KiB messages: about 1-2 s natively under TCG; atomics are 8 bytes.
case_write_bw() { bw_case write_bw ib_write_bw 1000; }
case_read_bw() { bw_case read_bw ib_read_bw 1000; }
# The same over rdma_cm (-R): perftest's route resolution, its cm_id QP and the connect
# handshake, proxied on both sides.
case_write_bw_cm() { bw_case write_bw_cm ib_write_bw 1000 -R; }
case_send_bw() { bw_case send_bw ib_send_bw 1000; }
# Four RC QPs in one context, sharing its CQ and MR: the WRs spread over the QPs, the iteration
# count is per QP (the row reports 4 x 250).
case_write_bw_qps() { bw_case write_bw_qps ib_write_bw 250 "-q 4"; }
# Completions by event on both sides (-e): a completion channel, ibv_req_notify_cq, the client
# blocking in ibv_get_cq_event on the channel fd, the server's receives reposted after each event.
case_send_bw_events() { bw_case send_bw_events ib_send_bw 1000 -e; }
case_atomic_bw() { bw_case atomic_bw ib_atomic_bw 2000; }
# perftest's other transports and options, each a different set of objects and commands:
# UD (-c UD: AHs from the exchanged GIDs, GRH-sized receive buffers, MTU-sized messages), UC,
# XRC (-c XRC: an XRC domain keyed by a file of perftest's own, an XRC SRQ, XRC INI/TGT QPs),
# a shared receive queue (--use-srq), both directions at once (-b), and small inline sends
# posted 8 at a time with a completion every 4th (-I, -l, -Q).
case_send_bw_ud() { bw_case send_bw_ud ib_send_bw 1000 "-c UD"; }
case_write_bw_uc() { bw_case write_bw_uc ib_write_bw 1000 "-c UC"; }
# A device without XRC (rxe) refuses the domain natively (EOPNOTSUPP, perftest's "Error opening
# XRC domain"): then both runs, once each, must fail alike.
case_send_bw_xrc() {
  if ibv_devinfo -v -d "$DEV0" 2>/dev/null | grep -qx '[[:space:]]*XRC'; then
    bw_case send_bw_xrc ib_send_bw 1000 "-c XRC"; return
  fi
  twice send_bw_xrc run_perftest ib_send_bw "-n 1000 -c XRC"
  if ((native_ok || proxied_ok)); then
    fail send_bw_xrc "$DEV0 has no XRC, yet native ok=$native_ok, proxied ok=$proxied_ok ($(statuses send_bw_xrc))"
    show send_bw_xrc.native; show send_bw_xrc.proxied
  else
    failed_alike send_bw_xrc server
  fi
}
case_send_bw_srq() { bw_case send_bw_srq ib_send_bw 1000 --use-srq; }
case_write_bw_bidir() { bw_case write_bw_bidir ib_write_bw 1000 -b; }
case_send_bw_inline() { bw_case send_bw_inline ib_send_bw 4000 "-s 64 -I 64 -l 8 -Q 4"; }
# lat_case NAME PROG ITERATIONS: a perftest latency test; passes when both runs report the same
# message size and iteration count.
lat_case() {
  local name=$1 prog=$2 iters=$3
  twice_repeating "$name" run_perftest "$prog" "-n $iters"
  local n p
  n=$(lat_row "$work/$name.native.client")
  p=$(lat_row "$work/$name.proxied.client")
  if ((native_ok && proxied_ok)) && [[ -n $n && -n $p ]]; then
    local nb ni nt pb pi pt
    read -r nb ni _ _ nt _ <<<"$n"
    read -r pb pi _ _ pt _ <<<"$p"
    if [[ $nb == "$pb" && $ni == "$pi" ]]; then
      pass "$name" "$(awk -v n="$nt" -v p="$pt" -v b="$nb" -v i="$ni" 'BEGIN {
        printf "%s bytes x %s: typical latency native %.2f us, proxied %.2f us (%.2fx)", b, i, n, p, p / n }')"
    else
      fail "$name" "rows differ: '$n' / '$p'"
    fi
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok ($(statuses "$name"))"; show "$name.native"; show "$name.proxied"
  fi
}
case_write_lat() { lat_case write_lat ib_write_lat 500; }
# SEND/RECV (the server posts receives) and RDMA READ round trips.
case_send_lat() { lat_case send_lat ib_send_lat 500; }
case_read_lat() { lat_case read_lat ib_read_lat 500; }
# Fetch-and-add round trips (one 8-byte atomic in flight, its result polled).
case_atomic_lat() { lat_case atomic_lat ib_atomic_lat 500; }

# rping_case NAME ADDR: rping (rdma_cm: resolve, connect, RDMA READ and WRITE of the pinged
# buffer, disconnect) to the server at ADDR, 10 pings verified, natively and under the proxy.
rping_case() {
  local name=$1 addr=$2 count=10
  run_rping() {
    local tag=$1 p
    local -a pre
    prefix_for "$2"
    next_port; p=$port
    pair "$tag" "cm:$p" \
      "${pre[@]}" rping -s -a "$addr" -p "$p" -C "$count" -v -V ::: \
      "${pre[@]}" rping -c -a "$addr" -p "$p" -C "$count" -v -V
  }
  twice "$name" run_rping
  # rping races its own event thread at exit (docs/harness.md, "A race the stops widen"): a
  # proxied run that verified every ping and then lost that race runs once more.
  if ((!proxied_ok)) && grep -qs 'rdma_get_cm_event: Bad file descriptor' "$work/$name.proxied.client" \
      "$work/$name.proxied.server" &&
      (($(grep -c '^ping data: rdma-ping-' "$work/$name.proxied.client") == count)); then
    echo "note: rping lost its exit race under the proxy; running the proxied side again" >&2
    run_rping "$name.proxied" proxied && proxied_ok=1
  fi
  local n p
  n=$(grep -c '^ping data: rdma-ping-' "$work/$name.native.client")
  p=$(grep -c '^ping data: rdma-ping-' "$work/$name.proxied.client")
  if ((native_ok && proxied_ok && n == count && p == count)); then
    pass "$name" "$count pings to $addr verified natively and under the proxy"
  else
    fail "$name" "native ok=$native_ok ($n pings), proxied ok=$proxied_ok ($p pings)"
    show "$name.native"; show "$name.proxied"
  fi
}
case_rping() { rping_case rping "$IP1"; }

# ipv6_of DEV GID_INDEX: an IPv6 address of the net device behind that RoCE GID, for rdma_cm:
# a global one if it has one, else its link-local address with the device as scope
# ("fe80::1%eth0": rdma_cm's address resolution needs the interface). Nothing for an
# InfiniBand port or a net device without IPv6.
ipv6_of() {
  local ndev
  ndev=$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$2" 2>/dev/null) || return 1
  [[ -n $ndev ]] || return 1
  ip -6 -o addr show dev "$ndev" scope global 2>/dev/null |
    awk '!done {sub(/\/.*/, "", $4); print $4; done = 1}' | grep . && return 0
  ip -6 -o addr show dev "$ndev" scope link 2>/dev/null |
    awk -v d="$ndev" '!done {sub(/\/.*/, "", $4); print $4 "%" d; done = 1}' | grep .
}
# rping over IPv6: rdma_cm's commands carry struct sockaddr_in6 (with a scope id for a
# link-local address) and RoCE v2 routes over an IPv6 GID.
case_rping_ipv6() {
  local addr
  if ! addr=$(ipv6_of "$DEV1" "$GID1"); then
    skip rping_ipv6 "no IPv6 address on the net device of $DEV1 GID $GID1"
    return
  fi
  rping_case rping_ipv6 "$addr"
}

# rping_netns: an rdma_cm client in a network namespace of its own (unshare -n; -rn, with a user
# namespace, when not root), which has no route to node1. The kernel puts an rdma_cm id in the
# namespace of the task that creates it (rdma_create_user_id), so the client must fail to
# resolve the address under the proxy exactly as natively: were the command issued from the
# harness's namespace, it would resolve.
case_rping_netns() {
  local -a ns=(unshare -n)
  ((EUID == 0)) || ns=(unshare -rn)
  if ! "${ns[@]}" true 2>/dev/null; then
    skip rping_netns "cannot create a network namespace here (${ns[*]})"
    return
  fi
  local nrc=0 prc=0 n p
  next_port
  limited 60 "$work/rping_netns.native.hang" "${ns[@]}" rping -c -a "$IP1" -p "$port" -C 1 \
    >"$work/rping_netns.native" 2>&1 || nrc=$?
  next_port
  limited 60 "$work/rping_netns.proxied.hang" "${PROXY[@]}" "${ns[@]}" rping -c -a "$IP1" \
    -p "$port" -C 1 >"$work/rping_netns.proxied" 2>&1 || prc=$?
  n=$(grep -m1 '^rdma_resolve_addr' "$work/rping_netns.native")
  p=$(grep -m1 '^rdma_resolve_addr' "$work/rping_netns.proxied")
  if ((nrc != 0 && nrc != 124 && nrc == prc)) && [[ -n $n && $n == "$p" ]]; then
    pass rping_netns "address resolution in the client's own namespace, both ways: \"$n\", exit $nrc"
  else
    fail rping_netns "native exit $nrc (\"$n\"), proxied exit $prc (\"$p\")"
    sed 's/^/  native: /' "$work/rping_netns.native" | tail -5
    sed 's/^/  proxied: /' "$work/rping_netns.proxied" | tail -5
  fi
}

# cm_case NAME CLIENT_LINE WHAT SERVER... ::: CLIENT...: an rdma_cm server and client, both
# natively and then both under the proxy; passes when both runs succeed and each client printed
# a line matching CLIENT_LINE. "@PORT@" in the commands is a fresh port per run, where the
# server is waited for; CM_PORT=N names the port of a server that has its own (udaddy).
cm_case() {
  local name=$1 expect=$2 what=$3; shift 3
  local -a spec=("$@")
  run_cm_case() {  # sees cm_case's locals (bash scoping is dynamic)
    local tag=$1 p w
    local -a pre words
    prefix_for "$2"
    next_port; p=$port
    words=("${pre[@]}")
    for w in "${spec[@]}"; do
      if [[ $w == ::: ]]; then words+=(::: "${pre[@]}"); else words+=("${w//@PORT@/$p}"); fi
    done
    pair "$tag" "cm:${CM_PORT:-$p}" "${words[@]}"
  }
  # A pair lost to the kernel dropping its last ACK runs again (repeat_lost_final_ack).
  run_cm_pair() { repeat_lost_final_ack "$1" "$2" run_cm_case cm_lost_final_ack "$expect"; }
  # A failed native run, the reference, is repeated (retry_run); a proxied one only so.
  twice_repeating "$name" run_cm_pair
  local n p
  n=$(grep -c -- "$expect" "$work/$name.native.client")
  p=$(grep -c -- "$expect" "$work/$name.proxied.client")
  if ((native_ok && proxied_ok && n > 0 && p > 0)); then
    pass "$name" "$what: natively and under the proxy"
  else
    fail "$name" \
      "native ok=$native_ok ($n \"$expect\"), proxied ok=$proxied_ok ($p); $(statuses "$name")"
    show "$name.native"; show "$name.proxied"
  fi
}

case_ucmatose() {
  cm_case ucmatose 'data transfers complete' "connect, 10 messages, disconnect" \
    ucmatose -b "$IP1" -p @PORT@ -C 10 ::: ucmatose -s "$IP1" -p @PORT@ -C 10
}

# udaddy: rdma_cm over UD (RDMA_PS_UDP): resolve, a UD QP, the address handle from the
# connect event's UD parameters, datagrams both ways. Its port is fixed (7174).
case_udaddy() {
  CM_PORT=7174 cm_case udaddy 'data transfers complete' "UD datagrams both ways over rdma_cm" \
    udaddy -b "$IP1" ::: udaddy -s "$IP1" -b "$IP0"
}

# mckey: rdma_cm multicast over UD. A receiver on node1 and a sender on node0 each join the
# same IPv4 group (JOIN_MCAST, the MULTICAST_JOIN event, the QP attached to the group with
# ATTACH_MCAST before librdmacm hands the event over, an address handle from the event's UD
# parameters); the sender posts 10 datagrams to the group, then both leave (DETACH_MCAST,
# LEAVE_MCAST). Natively and proxied, both must have joined, the sender must print the same
# lines and exit 0, and the receiver must end by itself (all 10 received) or wait until it is
# sent TERM. Delivery is reported, not compared: soft-RoCE in the test bed counts every
# datagram as sent (rxe's sent_pkts), yet natively the receiver got all 10 in 5 of 12 runs in
# one 6.12 boot (none of the 3 that reused a group), some or none in the others; hence a group
# of its own for each run.
# Output lines to compare: the harness's own lines out, the group and the multicast LID (the
# subnet manager may give the group another one for the second run on InfiniBand) masked.
mckey_lines() { grep -v '^rdmaproxy' "$1" | sed -E 's/dgid: [^ ]*/dgid: */; s/ mlid 0x[0-9a-f]* / mlid * /'; }
case_mckey() {
  local name=mckey
  run_mckey() {
    local tag=$1 rpid src=0 rrc=0 p group
    local -a pre
    prefix_for "$2"
    next_port; p=$port
    group=239.255.$((p / 250 % 250)).$((p % 250 + 1))
    # The receiver's stdout line-buffered: its "receiving data transfers" says it has joined
    # and waits, which is when the sender may start (a datagram sent before is lost).
    # A receiver that lost a datagram waits for it forever, and this runner ends it with TERM
    # at most 30 + 60 + 10 s after its start (the waits below): its own limit lies beyond that,
    # so that it is never cut off, and called hung, while it legitimately waits. (With 60 s, a
    # loaded CI machine's 6.12 guest once took longer than that to get there: the dump showed
    # the receiver polling its CQ as designed.)
    limited 150 "$work/$tag.server.hang" "${pre[@]}" stdbuf -oL mckey -m "$group" -b "$IP1" -C 10 \
      >"$work/$tag.server" 2>&1 &
    rpid=$!
    wait_until "$rpid" grep -qs '^receiving data transfers' "$work/$tag.server"
    limited 60 "$work/$tag.client.hang" "${pre[@]}" mckey -m "$group" -b "$IP0" -s -C 10 \
      >"$work/$tag.client" 2>&1 || src=$?
    # The datagrams' time to arrive: at most 10 s more for the receiver to end by itself,
    # by the clock (a count of `sleep 0.1`s is twice that under TCG, where each costs a fork).
    WAIT_SECS=10 wait_until "$rpid" false
    kill -TERM "$rpid" 2>/dev/null
    wait "$rpid" || rrc=$?
    echo "$rrc $src" >"$work/$tag.status"
    ((src == 0 && (rrc == 0 || rrc == 143))) && grep -qs '^mckey: joined dgid' "$work/$tag.server"
  }
  twice "$name" run_mckey
  local ns ps nj pj received way
  ns=$(mckey_lines "$work/$name.native.client")
  ps=$(mckey_lines "$work/$name.proxied.client")
  nj=$(mckey_lines "$work/$name.native.server" | grep '^mckey: joined')
  pj=$(mckey_lines "$work/$name.proxied.server" | grep '^mckey: joined')
  received=""
  for way in native proxied; do
    if grep -q '^data transfers complete' "$work/$name.$way.server"; then
      received+="$way: all 10, "
    else
      received+="$way: not all (ended by TERM), "
    fi
  done
  if ((native_ok && proxied_ok)) && [[ $ns == "$ps" && -n $nj && $nj == "$pj" ]]; then
    pass "$name" "both nodes joined an IPv4 group and the sender sent 10 datagrams, natively and under the proxy; received ${received%, }"
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok ($(statuses "$name"))"
    [[ $ns == "$ps" ]] || difference "$ns" "$ps"
    show "$name.native"; show "$name.proxied"
  fi
}

# rdma_server / rdma_client: librdmacm's own verbs helpers (rdma_getaddrinfo, rdma_create_ep
# with its QP, rdma_reg_msgs, rdma_post_recv/send, rdma_get_send_comp) over a connection.
case_rdma_client() {
  cm_case rdma_client '^rdma_client: end 0' "one message each way, both sides end 0" \
    rdma_server -s "$IP1" -p @PORT@ ::: rdma_client -s "$IP1" -p @PORT@
}

# rstream: rsockets, librdmacm's socket API over rdma_cm and verbs (the connection set up through
# rdma_cm, data moved as RDMA writes with immediate into the peer's receive buffer, blocking
# calls waiting on the completion channel): 100 transfers of 4 KiB each way; the client prints
# one result row.
case_rstream() {
  cm_case rstream '^custom ' "rsockets stream, 100 x 4 KiB each way" \
    rstream -b "$IP1" -p @PORT@ -S 4096 -C 100 ::: rstream -s "$IP1" -p @PORT@ -S 4096 -C 100
}

# riostream: rsockets with riomap (the receive buffer mapped for the peer's RDMA writes) and
# riowrite, data checked on arrival (-T v): 50 transfers of 4 KiB each way.
case_riostream() {
  cm_case riostream '^custom ' "rsockets iomap writes, 50 x 4 KiB each way, data verified" \
    riostream -b "$IP1" -p @PORT@ -S 4096 -C 50 -T v ::: \
    riostream -s "$IP1" -b "$IP0" -p @PORT@ -S 4096 -C 50 -T v
}

# cmtime: 20 rdma_cm connections timed step by step (create id, bind, resolve address and
# route, create QP, connect, disconnect, destroy), the connects and disconnects in flight
# together, driven by rdma_cm's event channel. Its server never exits by itself: it is sent
# SIGTERM once the client is done, and both ways it must die of that signal (exit 143; the
# harness forwards the signal and exits as its program did).
cmtime_steps='create id|bind addr|resolve addr|resolve route|create qp|connect|disconnect|destroy'
# cmtime_connect_us WAY: the "us / conn" column of the client's connect row.
cmtime_connect_us() {
  awk -F: '$1 ~ /^connect / {split($2, f, " "); print f[4]}' "$work/cmtime.$1.client"
}
case_cmtime() {
  local name=cmtime
  run_cmtime() {
    local tag=$1 p spid src=0 crc=0
    local -a pre
    prefix_for "$2"
    next_port; p=$port
    # The server never ends by itself; the runner ends it with TERM after the client, up to
    # 30 + 120 s after its start: its own limit lies beyond that (as mckey's receiver's does).
    limited 180 "$work/$tag.server.hang" "${pre[@]}" cmtime -b "$IP1" -p "$p" >"$work/$tag.server" 2>&1 &
    spid=$!
    if wait_cm "$p" "$spid"; then
      limited 120 "$work/$tag.client.hang" "${pre[@]}" cmtime -s "$IP1" -b "$IP0" -p "$p" -c 20 >"$work/$tag.client" 2>&1 ||
        crc=$?
    else
      echo "the server never listened" >"$work/$tag.client"; crc=124
    fi
    kill -TERM "$spid" 2>/dev/null
    wait "$spid" || src=$?
    echo "$src $crc" >"$work/$tag.status"
    ((src == 143 && crc == 0))
  }
  twice "$name" run_cmtime
  local n p
  n=$(grep -Eo "^($cmtime_steps) *:" "$work/$name.native.client" | tr -s ' ' | tr '\n' ',')
  p=$(grep -Eo "^($cmtime_steps) *:" "$work/$name.proxied.client" | tr -s ' ' | tr '\n' ',')
  if ((native_ok && proxied_ok)) && [[ $(tr -cd , <<<"$n") == ",,,,,,,," && $n == "$p" ]]; then
    pass "$name" "20 connections, all 8 steps timed both ways; connect $(cmtime_connect_us native) us natively, $(cmtime_connect_us proxied) us proxied per connection; server ended by SIGTERM both ways"
  else
    fail "$name" "native ok=$native_ok, proxied ok=$proxied_ok (steps: $n / $p; $(statuses "$name"))"
    show "$name.native"; show "$name.proxied"
  fi
}

case_verbs_exercise() {
  local native proxy nrc=0 prc=0 issued
  native=$("$EXERCISE" "$DEV0" "$GID0" 2>&1) || nrc=$?
  proxy=$(proxied "$EXERCISE" "$DEV0" "$GID0" 2>"$work/exercise.stats") || prc=$?
  # With --stats: how many commands the tracer issued itself (docs/harness.md "Who issues a
  # verbs ioctl"): none with --app-issues-all, some otherwise (queries, MODIFY_QP, destroys).
  issued=$(sed -n 's/.*issued by the tracer \([0-9]*\).*/\1/p' "$work/exercise.stats" | tail -n 1)
  local wrong=0
  if [[ -n $issued ]]; then
    if [[ $run_opts == *--app-issues-all* ]]; then ((issued == 0)) || wrong=1
    else ((issued > 0)) || wrong=1; fi
  fi
  if ((wrong)); then
    fail verbs_exercise "the tracer issued $issued commands with run options '$run_opts'"
  elif ((nrc == 0 && prc == 0)) && [[ $native == "$proxy" ]]; then
    pass verbs_exercise "$(grep -c '^ok ' <<<"$native") steps and $(grep -c '^errno ' <<<"$native") error paths identical${issued:+; $issued issued by the tracer}"
  else
    fail verbs_exercise "exit $nrc / $prc"; difference "$native" "$proxy"
  fi
}

# One context shared across fork, threads and posix_spawn (tests/conformance/verbs_processes.cc):
# a fork child's objects and writes (EACCES where the doorbell is a write()), a child's posts
# before and after it changes its credentials (EACCES after, there too), threads waiting for
# completion events while others pin, spawned shells. Every line must be the same.
case_verbs_processes() {
  local native proxy nrc=0 prc=0
  native=$(timeout 300 "$PROCESSES" "$DEV0" "$GID0" 2>&1) || nrc=$?
  proxy=$(timeout 300 "${PROXY[@]}" "$PROCESSES" "$DEV0" "$GID0" 2>/dev/null) || prc=$?
  if ((nrc == 0 && prc == 0)) && [[ $native == "$proxy" ]]; then
    pass verbs_processes "$(grep -c '^ok ' <<<"$native") steps and $(grep -c '^errno ' <<<"$native") errnos identical ($(grep '^errno child_post_send' <<<"$native" || echo 'the child posted'); $(grep '^errno cred_post_after_change' <<<"$native" || echo 'posted after a credential change'); $(grep -c '^ok cred_.* after it EACCES' <<<"$native") of $(grep -c '^ok cred_\(noop\|query\|new\|no_new\)' <<<"$native") no-op credential calls committed)"
  else
    fail verbs_processes "exit $nrc / $prc"; difference "$native" "$proxy"
  fi
}

# NETLINK_RDMA (tools/harness/netlink_rdma.h): the copy-on-fork question (SYS_GET) and the
# device queries (GET dump, GET_CHARDEV "uverbs", also read with MSG_PEEK|MSG_TRUNC first, or
# with recvmmsg) get the native answers, whether sent with sendmsg, sendto or write (the suite allows every
# device under its own name); multicast groups, other sockets as peers, vectored, spliced,
# sendfile, asynchronous and malformed sends are refused; --refuse-netlink refuses the socket.
case_netlink() {
  local native proxy refused want
  native=$("$PROBE" 2>&1)
  if ! grep -q '^socket ok' <<<"$native"; then
    skip netlink "no RDMA netlink here: $(head -n 1 <<<"$native")"; return
  fi
  proxy=$(proxied "$PROBE" 2>/dev/null)
  refused=$("$RDMAPROXY" run --refuse-netlink -- "$PROBE" 2>/dev/null)
  if [[ $run_opts == *--refuse-netlink* ]]; then
    if [[ $proxy == "socket errno EPROTONOSUPPORT" ]]; then
      pass netlink "run options '$run_opts': the socket is refused (EPROTONOSUPPORT)"
    else
      fail netlink "run options '$run_opts': $(head -n 1 <<<"$proxy")"
    fi
    return
  fi
  want="socket ok
bind ok
$(grep -E '^(sys_get_|get|port_bad|recv|read|blocked_|control_)' <<<"$native")
bind_other ok
bind_groups errno EPERM
add_membership errno EPERM
sendto_peer errno EPERM
connect_peer errno EPERM
writev errno EOPNOTSUPP
truncated errno EINVAL
memfd ok
sendfile errno EOPNOTSUPP
pipe ok
pipe_write ok
splice errno EOPNOTSUPP
io_setup ok
aio_write errno EINVAL"
  if [[ $proxy != "$want" ]]; then
    fail netlink "under the proxy"; difference "$want" "$proxy"
  elif [[ $refused != "socket errno EPROTONOSUPPORT" ]]; then
    fail netlink "with --refuse-netlink: $refused"
  else
    pass netlink "$(grep '^sys_get_sendmsg' <<<"$native" | cut -d' ' -f2-) and $(grep '^get ' <<<"$native" | cut -d' ' -f2-) natively and under the proxy, and $(grep -cE '^(recv|read).* kept=' <<<"$native") receives' errors and queue effects, a receive blocked before the answer ($(grep '^blocked_recvmsg' <<<"$native" | cut -d' ' -f2-)), one with the kernel's control messages ($(grep '^control_recvmsg' <<<"$native" | cut -d' ' -f2-)), $(grep -c '^recvmmsg_' <<<"$native") recvmmsg cases ($(grep '^recvmmsg_dump' <<<"$native" | cut -d' ' -f2-)); groups and peers EPERM; --refuse-netlink: EPROTONOSUPPORT"
  fi
}

# rdma-core's own Python test suite (tests/run_tests.py, shipped by python3-pyverbs in
# /usr/share/doc/rdma-core/tests), on node0's device, natively and under the proxy: every test's
# outcome (ok, skip, fail, error) must be the same. It runs as an unprivileged user (nobody when
# the suite runs as root): as root the tests expect raw-packet QPs, which the kernel grants to
# CAP_NET_RAW and the policy denies to every sandbox (EPERM); unprivileged, the kernel and the
# policy refuse the same things. Tests whose outcomes differ run again, alone, both ways, up to
# twice, and count as equal when a rerun agrees. One test races the device natively and is
# reported, not compared, when its outcomes still differ (RDMA_CORE_RACES).
RDMA_CORE_TESTS=${RXP_RDMA_CORE_TESTS:-/usr/share/doc/rdma-core/tests}
# test_resize_cq posts sends and then expects EINVAL from shrinking the CQ below the completions
# it holds; on rxe the sends complete on a workqueue (rxe_post_send schedules the requester), so
# natively the resize usually runs first and the test fails, while under the proxy (slower) the
# completions are in and it passes.
RDMA_CORE_RACES=(tests.test_cq.CQTest.test_resize_cq)
case_rdma_core_tests() {
  # pyverbs is built for the distribution's Python: the first python3 on PATH may be another.
  local python=
  for python in python3 /usr/bin/python3 ""; do
    [[ -n $python ]] && "$python" -c 'import pyverbs' 2>/dev/null && break
  done
  if [[ ! -e $RDMA_CORE_TESTS/run_tests.py || -z $python ]]; then
    skip rdma_core_tests "no rdma-core Python tests (install python3-pyverbs, or set RXP_RDMA_CORE_TESTS)"
    return
  fi
  local dir
  dir=$(mktemp -d)
  cp -r "$RDMA_CORE_TESTS" "$dir/tests"
  find "$dir/tests" -name '*.gz' -exec gunzip -f {} +
  cp "$here/rdma_core_tests.py" "$dir/"
  local -a user=()
  if (($(id -u) == 0)); then
    chown -R 65534:65534 "$dir"
    user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  fi
  # run_tests WRAP RESULTS [--only ID]...: the suite natively or proxied, outcomes to RESULTS.
  run_tests() {
    local wrap=$1 results=$2; shift 2
    prefix_for "$wrap"
    (cd "$dir" && PYTHONDONTWRITEBYTECODE=1 "${user[@]}" "${pre[@]}" "$python" rdma_core_tests.py \
      --tests-dir "$dir/tests" --results "$dir/$results" --dev "$DEV0" --gid "$GID0" "$@") \
      >"$dir/$results.log" 2>&1
  }
  # differing_ids A B: the ids of the tests whose outcomes differ between result files A and B.
  differing_ids() { diff "$dir/$1" "$dir/$2" | sed -n 's/^[<>] [a-z]* //p' | sort -u; }
  local nrc=0 prc=0
  run_tests native native.txt || nrc=$?
  run_tests proxied proxied.txt || prc=$?
  if ((nrc != 0 || prc != 0)) || [[ ! -s $dir/native.txt || ! -s $dir/proxied.txt ]]; then
    fail rdma_core_tests "runner exit native $nrc, proxied $prc"
    tail -n 5 "$dir/native.txt.log" "$dir/proxied.txt.log"
    rm -rf "$dir"; return
  fi
  local total ran skipped_tests differ attempt id reruns=0
  total=$(wc -l <"$dir/native.txt")
  ran=$(grep -c '^ok ' "$dir/native.txt")
  skipped_tests=$(grep -c '^skip ' "$dir/native.txt")
  differ=$(differing_ids native.txt proxied.txt)
  for attempt in 1 2; do
    [[ -n $differ ]] || break
    local -a only=()
    for id in $differ; do only+=(--only "$id"); done
    reruns=$((reruns + $(wc -w <<<"$differ")))
    rm -f "$dir/rerun_native.txt" "$dir/rerun_proxied.txt"
    if ! run_tests native rerun_native.txt "${only[@]}" ||
       ! run_tests proxied rerun_proxied.txt "${only[@]}"; then
      fail rdma_core_tests "the rerun of $(wc -w <<<"$differ") tests did not run"
      tail -n 5 "$dir/rerun_native.txt.log" "$dir/rerun_proxied.txt.log"
      rm -rf "$dir"; return
    fi
    differ=$(differing_ids rerun_native.txt rerun_proxied.txt)
  done
  local raced=() race
  for race in "${RDMA_CORE_RACES[@]}"; do
    if grep -qxF "$race" <<<"$differ"; then
      raced+=("${race##*.}")
      differ=$(grep -vxF "$race" <<<"$differ")
    fi
  done
  if [[ -n $differ ]]; then
    fail rdma_core_tests "outcomes differ after two reruns: $(wc -w <<<"$differ") tests"
    difference "$(cat "$dir/rerun_native.txt")" "$(cat "$dir/rerun_proxied.txt")"
  else
    pass rdma_core_tests "$((total - ${#raced[@]})) of $total tests with the same outcome natively and proxied (natively $ran ok, $skipped_tests skipped, $((total - ran - skipped_tests)) failed); $reruns rerun${raced[*]:+; differed, a known native race: ${raced[*]}}"
  fi
  rm -rf "$dir"
}

# qperf (its own package: a TCP control connection, then verbs): RC bandwidth, RDMA WRITE
# latency, RDMA READ latency and compare-and-swap with every swapped value checked, with the
# QPs connected over rdma_cm (-cm1, which RoCE needs: without it qperf addresses the peer by
# LID). The server serves clients until it is killed, so it is stopped once the client is done.
# Passes when both clients exit 0 and print one nonzero result per test, under the same names.
# -to 30: qperf's socket timeout (5 s by default, both ends: the client passes it to the server).
# After its window an atomic client still posts one atomic per completion of its last poll (rdma.c
# ib_client_atomic checks Finished per poll, not per post), and on rxe each post is a doorbell
# write() the harness stops: under CI's load that took more than 5 s, and the server gave up with
# "failed to receive synchronization after test: timed out" (qperf.c exchange_results).
# The figures count the completions polled inside the window (-t, seconds; rdma.c
# rd_client_rdma_bw and ib_client_atomic stop counting once it has closed).
#   - READ: rc_rdma_read_lat, one READ in flight (rdma.c rd_client_rdma_read_lat), not
#     rc_rdma_read_bw. The bandwidth test opens its window by posting NCQE = 1024 READs before its
#     first poll, and on rxe every post is a doorbell write() the harness stops: with 4 KiB
#     messages and an 8 s window that measured 1024 completions here (523 KB/s, exactly the
#     first batch), and in CI's 6.1 guest none, five runs in a row (0 bytes/sec; compare-and-swap
#     107/s and write latency 7 ms in the same runs), the posts alone outlasting the window.
#     Under the latency test each READ is a post, a completion event and a poll, so the first
#     completion comes after a few stops, not 1024. READ bandwidth stays covered by perftest's
#     ib_read_bw (read_bw), which counts iterations, not a window.
#   - compare-and-swap: ver_rc_compare_swap, which checks the value every swap returned (a
#     mismatch ends qperf with an error) and keeps -m / 8 = 8 atomics in flight, not 1024 (the
#     same window problem as READ bandwidth: 0 in 4 of 6 runs proxied with qperf's defaults).
# A run that still prints a rate of 0 measured nothing and is repeated (retry_run).
# The options stick to the tests after them on qperf's command line (qperf.c do_args).
# Each test is its own client run against the one server: between the tests of one client run
# the server re-listens on its rdma_cm port while the client already connects to it, and a
# client that connects first is rejected ("unexpected event from RDMA CM: Event rejected"). In a
# guest with one vCPU the native client lost that race in five runs out of five (2026-12-01);
# a new client process, which must start and reach the server over TCP first, does not.
QPERF_RUNS=("-t 2 rc_bw" "-t 2 rc_rdma_write_lat" "-t 2 -m 4K rc_rdma_read_lat"
            "-t 2 -m 64 ver_rc_compare_swap")
QPERF_TEST_COUNT=${#QPERF_RUNS[@]}
QPERF_RESULT='^ +(bw|latency|msg_rate) += '
# A result of 0: no completion counted in the test's window.
qperf_measured_nothing() { grep -qsE "${QPERF_RESULT} *0 " "$work/$1.client"; }
qperf_results() { grep -E "^[a-z_]+:\$|$QPERF_RESULT" "$1" | tr -s ' ' | tr '\n' ' '; }
# The tests and the figures they reported, without the values.
qperf_shape() { sed -E 's/= [0-9.]+ [A-Za-z/]+/=/g' <<<"$1"; }
case_qperf() {
  if ! command -v qperf >/dev/null; then skip qperf "no qperf (install the qperf package)"; return; fi
  run_qperf() {  # run_qperf TAG WRAP
    local tag=$1 p spid src=0 crc=0
    local -a pre
    prefix_for "$2"
    next_port; p=$port
    # Ended by the runner's TERM after the client, like cmtime's server: a limit beyond
    # 30 + 120 s.
    limited 180 "$work/$tag.server.hang" "${pre[@]}" qperf -lp "$p" >"$work/$tag.server" 2>&1 &
    spid=$!
    if wait_tcp "$p" "$spid"; then
      : >"$work/$tag.client"
      local run
      for run in "${QPERF_RUNS[@]}"; do
        # shellcheck disable=SC2086  # a run's words are qperf's arguments
        limited 120 "$work/$tag.client.hang" "${pre[@]}" qperf "$IP1" -lp "$p" -cm1 -to 30 $run \
          >>"$work/$tag.client" 2>&1 || crc=$?
        ((crc == 0)) || break
      done
    else
      crc=124
    fi
    kill "$spid" 2>/dev/null
    wait "$spid" || src=$?
    # Killed by the suite (SIGTERM through timeout: 143) is how a qperf server ends.
    ((src == 143)) && src=0
    echo "$src $crc" >"$work/$tag.status"
    ((src == 0 && crc == 0))
  }
  # A run that lost the race above is repeated (retry_run), as is a failed native one.
  twice_repeating qperf run_qperf
  local n p tests
  n=$(qperf_results "$work/qperf.native.client")
  p=$(qperf_results "$work/qperf.proxied.client")
  tests=$(grep -cE "$QPERF_RESULT" "$work/qperf.proxied.client")
  if ((native_ok && proxied_ok && tests == $QPERF_TEST_COUNT)) &&
     [[ $(qperf_shape "$n") == "$(qperf_shape "$p")" ]]; then
    pass qperf "$QPERF_TEST_COUNT tests over rdma_cm, each with a nonzero result both ways: native $n/ proxied $p"
  else
    fail qperf "native ok=$native_ok, proxied ok=$proxied_ok ($(statuses qperf)), $tests of $QPERF_TEST_COUNT results under the proxy"
    show qperf.native; show qperf.proxied
  fi
}

# by_spec CASE PREFIX RUNNER RESULT SUMMARY SPEC...: for each SPEC ("NAME|ARGS"), RUNNER (see
# twice) with $args set to ARGS, both ways under the tags PREFIX_NAME; RESULT FILE extracts what
# must be equal from a client's output. Passes CASE when every run exits 0 and every result is
# non-empty and equal both ways.
by_spec() {
  local name=$1 prefix=$2 runner=$3 result=$4 summary=$5 spec test args n p rows=() bad=0
  shift 5
  for spec in "$@"; do
    test=${spec%%|*} args=${spec#*|}
    twice "${prefix}_$test" "$runner"
    n=$("$result" "$work/${prefix}_$test.native.client")
    p=$("$result" "$work/${prefix}_$test.proxied.client")
    if ((native_ok && proxied_ok)) && [[ -n $n && $n == "$p" ]]; then
      rows+=("$test: $p")
    else
      bad=1
      fail "$name" "$test: native ok=$native_ok, proxied ok=$proxied_ok ($(statuses "${prefix}_$test")), results '$n' / '$p'"
      show "${prefix}_$test.native"; show "${prefix}_$test.proxied"
    fi
  done
  ((bad)) || pass "$name" "$summary: $(IFS=,; echo "${rows[*]}")"
}

# ucx_perftest (UCX's own transport benchmark, ucx-utils): the rc_verbs transport -- UCX's
# device and GID discovery through /sys and verbs queries, its QPs, memory registration and a
# TCP exchange of their addresses -- moving 4 KiB RDMA WRITEs (put, zero-copy) and then active
# messages (send/receive, copied). Passes when every run exits 0 and reports the iterations
# asked for.
UCX_SPECS=("put_bw|-t put_bw -D zcopy -s 4096 -n 1000" "am_bw|-t am_bw -D bcopy -s 1024 -n 1000")
ucx_final() { awk '$1 == "Final:" {print $2}' "$1" | tail -n 1; }
case_ucx_perftest() {
  if ! command -v ucx_perftest >/dev/null; then
    skip ucx_perftest "no ucx_perftest (install the ucx-utils package)"; return
  fi
  run_ucx() {  # run_ucx TAG WRAP: by_spec's current $args (bash scoping is dynamic)
    local q
    local -a pre
    prefix_for "$2"
    next_port; q=$port
    pair "$1" "tcp:$q" \
      "${pre[@]}" ucx_perftest -p "$q" -d "$DEV1:1" -x rc_verbs ::: \
      "${pre[@]}" ucx_perftest "$IP1" -p "$q" -d "$DEV0:1" -x rc_verbs $args
  }
  by_spec ucx_perftest ucx run_ucx ucx_final "rc_verbs, natively and under the proxy (iterations)" \
    "${UCX_SPECS[@]}"
}

# fi_pingpong (libfabric's own ping-pong, libfabric-bin) on the verbs provider's connected
# endpoints: libfabric's device discovery through verbs queries and /sys, an rdma_cm connection,
# its memory registration and completion queues, with every message's bytes checked (-c).
# Passes when every run exits 0 and both ways report the same sizes and message counts.
LIBFABRIC_SPECS=("64B|-S 64 -I 500" "64KiB|-S 65536 -I 50")
case_libfabric() {
  if ! command -v fi_pingpong >/dev/null; then
    skip libfabric "no fi_pingpong (install the libfabric-bin package)"; return
  fi
  fi_pair() {  # fi_pair TAG WRAP: by_spec's current $args (bash scoping is dynamic)
    local q
    local -a pre
    prefix_for "$2"
    next_port; q=$port
    # No -d: libfabric picks the device from the route to the address, as the kernel's rdma_cm
    # does (a device named for a local address fails fi_getinfo with ENODATA in loopback).
    pair "$1" "tcp:$q" \
      "${pre[@]}" fi_pingpong -p verbs -e msg -B "$q" -c $args ::: \
      "${pre[@]}" fi_pingpong -p verbs -e msg -P "$q" -c $args "$IP1"
  }
  # run_fi TAG WRAP: a pair lost to the finalize race (diagnose.sh) runs again.
  run_fi() { repeat_lost_final_ack "$1" "$2" fi_pair fi_lost_final_ack; }
  by_spec libfabric fi run_fi fi_rows \
    "fi_pingpong, verbs msg endpoints, data checked, natively and under the proxy (bytes sent acked)" \
    "${LIBFABRIC_SPECS[@]}"
}

# The engine counter line `rdmaproxy run --stats` prints.
forwarded_of() { sed -n 's/.*engine: .*forwarded \([0-9]*\).*/\1/p' "$1" | tail -n 1; }
refused_of() { sed -n 's/.*engine: .*refused \([0-9]*\).*/\1/p' "$1" | tail -n 1; }
case_hostile() {
  local nrc=0 prc=0 src=0
  "$HOSTILE" "$DEV0" >"$work/hostile.native" 2>&1 || nrc=$?
  "$RDMAPROXY" run --stats -- "$HOSTILE" "$DEV0" >"$work/hostile.proxied" 2>"$work/hostile.stats" || prc=$?
  "$RDMAPROXY" run --stats -- "$HOSTILE" --setup-only "$DEV0" >/dev/null 2>"$work/hostile.setup" || src=$?
  local cases fwd setup refused
  cases=$(sed -n 's/^hostile cases: //p' "$work/hostile.native")
  fwd=$(forwarded_of "$work/hostile.stats")
  setup=$(forwarded_of "$work/hostile.setup")
  refused=$(refused_of "$work/hostile.stats")
  if ((nrc != 0 || prc != 0 || src != 0)); then
    fail hostile "exit native $nrc, proxied $prc, setup-only $src"; cat "$work/hostile.stats" | tail -5
  elif ! diff -q "$work/hostile.native" "$work/hostile.proxied" >/dev/null; then
    fail hostile "errnos differ"; diff "$work/hostile.native" "$work/hostile.proxied"
  elif [[ -z $fwd || -z $setup || $fwd != "$setup" ]]; then
    fail hostile "forwarded $fwd commands, the setup alone $setup: a hostile command reached the kernel"
  else
    pass hostile "$cases cases, same errnos as native; forwarded $fwd = setup-only $setup, refused $refused"
  fi
}

# ---- run ---------------------------------------------------------------------------------------

for c in "${cases[@]}"; do
  if ! declare -F "case_$c" >/dev/null; then
    echo "suite: no case $c (--list)" >&2
    exit 2
  fi
  "case_$c"
done
echo "conformance: $passed passed, $failed failed, $skipped skipped"
((failed == 0)) || printf '%s\n' "${failures[@]}"
((failed == 0))
