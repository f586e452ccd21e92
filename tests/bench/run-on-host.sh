#!/bin/bash
# The benchmarks of issues 4 and 6 on a real RDMA host (mlx5, ...), outside the VM test bed:
#
#   tests/bench/run-on-host.sh [--build DIR] [--node0 DEV:GID_INDEX:IP] [--node1 ...]
#                              [--quick] [BENCH...]
#
# BENCH is any of syscall_mix, control_path, write_bw, sentry (default: all four, in that
# order). Each compares native runs with proxied ones taken in the same invocation and prints
# ratios, as the VM test bed's vm.harness.bench, vm.bench.control_path, vm.bench.write_bw and
# vm.bench.sentry do; the last lines repeat each benchmark's summary. Off emulation these are
# the figures that say what the proxy costs (under TCG a ptrace stop costs 65-235 us against
# 7-11 us on hardware: docs/harness.md and docs/embedding.md, "Cost").
#
# Devices are picked as the conformance suite picks them (tests/conformance/nodes.sh): the first
# device with an active port and a RoCE v2 IPv4 GID (or an InfiniBand port); node1 defaults to
# node0 (loopback). Run it as root or as a user allowed to use the devices and to ptrace its own
# children, on an otherwise idle machine. --quick runs each benchmark briefly (a smoke test of
# the runner; its figures are noisy). Exits 1 if a benchmark failed, 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
# shellcheck source=../conformance/nodes.sh
source "$root/tests/conformance/nodes.sh"
node0='' node1='' quick=0
benches=()
while (($#)); do
  case $1 in
    --build|--node0|--node1)
      [[ -n ${2:-} ]] || { echo "run-on-host: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --build) build=$(cd "$2" 2>/dev/null && pwd) || { echo "run-on-host: no directory $2" >&2; exit 2; }; shift 2 ;;
    --node0) node0=$2; shift 2 ;;
    --node1) node1=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-on-host: unknown option $1" >&2; exit 2 ;;
    syscall_mix|control_path|write_bw|sentry) benches+=("$1"); shift ;;
    *) echo "run-on-host: unknown benchmark $1 (syscall_mix, control_path, write_bw, sentry)" >&2
       exit 2 ;;
  esac
done
((${#benches[@]})) || benches=(syscall_mix control_path write_bw sentry)
for f in tools/rdmaproxy tests/bench/rxp_verbs_loop tests/bench/rxp_stop_floor \
         tests/bench/rxp_harness_bench tests/bench/rxp_bench_workload tests/bench/rxp_sentry_bench; do
  [[ -x $build/$f ]] || { echo "run-on-host: no $build/$f (build first: cmake --build $build)" >&2; exit 2; }
done
if [[ -z $node0 ]]; then
  node0=$(detect_node) || { echo "run-on-host: no RDMA device with an active port (give --node0)" >&2; exit 2; }
fi
[[ -n $node1 ]] || node1=$node0
for n in "$node0" "$node1"; do
  [[ $n =~ ^[^:]+:[0-9]+:[^:]+$ ]] || { echo "run-on-host: '$n' is not DEV:GID_INDEX:IP" >&2; exit 2; }
  [[ -e /sys/class/infiniband/${n%%:*} ]] || { echo "run-on-host: no RDMA device ${n%%:*}" >&2; exit 2; }
done
IFS=: read -r dev0 gid0 ip0 <<<"$node0"
IFS=: read -r dev1 gid1 ip1 <<<"$node1"

# The VM test bed's benchmark scripts read the two nodes from $RXP_SHARE/testbed.env (written
# in the guest by setup-testbed.sh); here it describes the host's devices.
RXP_SHARE=$(mktemp -d /tmp/rxp-bench.XXXXXX) || exit 1
export RXP_SHARE
trap 'rm -rf "$RXP_SHARE"' EXIT
netdev_of() { cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$2" 2>/dev/null; }
cat >"$RXP_SHARE/testbed.env" <<ENV
RXP_NODE0_DEV=$dev0
RXP_NODE0_IP=$ip0
RXP_NODE0_NETDEV=$(netdev_of "$dev0" "$gid0")
RXP_NODE0_GID=$gid0
RXP_NODE1_DEV=$dev1
RXP_NODE1_IP=$ip1
RXP_NODE1_NETDEV=$(netdev_of "$dev1" "$gid1")
RXP_NODE1_GID=$gid1
ENV
echo "run-on-host: node0 $dev0 (GID $gid0, $ip0), node1 $dev1 (GID $gid1, $ip1); $(uname -r), $(nproc) CPUs"

if ((quick)); then
  export SECONDS_PER_RUN=1 ITERATIONS=200
  write_bw_rounds=1 harness_args=(--reps 1 --scale 0.05) sentry_calls=500
else
  write_bw_rounds=5 harness_args=(--reps 5) sentry_calls=8000
fi

# run_bench NAME SUMMARY_REGEX CMD...: runs one benchmark with its output shown as it comes,
# keeps the lines matching SUMMARY_REGEX for the summary; a failure is reported and counted.
failed=() summary=()
run_bench() {
  local name=$1 pattern=$2 out status
  shift 2
  echo
  echo "== $name: $*"
  out=$RXP_SHARE/$name.out
  "$@" 2>&1 | tee "$out"
  status=${PIPESTATUS[0]}
  if ((status != 0)); then
    failed+=("$name (exit $status)")
    summary+=("$name: FAILED (exit $status)")
    return
  fi
  # Through a file, not < <(grep ...): the test-bed guest has no /dev/fd for a process
  # substitution.
  local -a lines
  grep -E "$pattern" "$out" >"$out.summary"
  mapfile -t lines <"$out.summary"
  summary+=("${lines[@]}")
}

for bench in "${benches[@]}"; do
  case $bench in
    syscall_mix)
      run_bench syscall_mix '^syscall mix|^stop cost' \
        "$build/tests/bench/rxp_harness_bench" "$build/tests/bench/rxp_bench_workload" "${harness_args[@]}" ;;
    control_path)
      run_bench control_path '^control path|^floor:' \
        "$root/tests/vm/cases/bench_control_path.sh" "$build" ;;
    write_bw)
      run_bench write_bw '^ib_write_bw' \
        "$root/tests/vm/cases/bench_write_bw.sh" "$build" "$write_bw_rounds" ;;
    sentry)
      run_bench sentry '^command |^largest added|^[A-Z_.]+ .*x +[0-9]+$' \
        "$build/tests/bench/rxp_sentry_bench" "$dev0" "$sentry_calls" ;;
  esac
done

echo
echo "== summary ($dev0, $(uname -r))"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "run-on-host: failed: ${failed[*]}" >&2
  exit 1
fi
