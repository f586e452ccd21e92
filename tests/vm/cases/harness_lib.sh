# harness_lib.sh: sourced by the harness VM cases (harness_*.sh) after testbed.sh.
# Usage: a case is registered with the build directory as its first argument.
#   rxp_run [RUN OPTIONS...] -- PROG ARGS...   runs PROG under `rdmaproxy run`
# rxp_pair splits its arguments on the first "--", so cases call rxp_run through it as
# "rxp_run_default PROG ARGS" (no "--" inside), with options in RXP_RUN_OPTS.
# shellcheck shell=bash
RXP_BUILD=${1:?the build directory is the first argument}
RXP_RDMAPROXY=$RXP_BUILD/tools/rdmaproxy
[[ -x $RXP_RDMAPROXY ]] || { echo "harness: no $RXP_RDMAPROXY (build first)" >&2; exit 1; }
RXP_RUN_OPTS=()

rxp_run() { "$RXP_RDMAPROXY" run "$@"; }
rxp_run_default() { "$RXP_RDMAPROXY" run "${RXP_RUN_OPTS[@]}" -- "$@"; }

# rxp_devinfo_blocks TEXT: ibv_devinfo output with its per-device blocks sorted by name, for
# comparisons that are about each device's attributes, not their order (which the harness keeps
# as natively: docs/harness.md "Device order"; the conformance suite checks that).
rxp_devinfo_blocks() {
  awk 'BEGIN { RS = "hca_id:"; ORS = "" }
       NR > 1 { block = "hca_id:" $0; sub(/\n+$/, "", block); print block "\n\0" }' <<<"$1" |
    sort -z | tr '\0' '\n'
}

# rxp_resources_back_to_baseline [SECONDS]: waits until `rdma resource show` equals the
# agent's baseline (the kernel releases objects asynchronously after a kill).
rxp_resources_back_to_baseline() {
  local limit=${1:-20} i now
  for ((i = 0; i < limit * 5; i++)); do
    now=$(rdma resource show 2>&1)
    [[ "$now" == "$(cat "$RXP_SHARE/baseline")" ]] && return 0
    sleep 0.2
  done
  echo "rdma resource show is not back to its baseline:" >&2
  rxp_diff "$(cat "$RXP_SHARE/baseline")" "$now" >&2
  return 1
}

# rxp_diff TEXT1 TEXT2: diff of two strings (the guest has no /dev/fd for <(...)).
rxp_diff() {
  local dir rc=0
  dir=$(mktemp -d)
  printf '%s\n' "$1" >"$dir/a"
  printf '%s\n' "$2" >"$dir/b"
  diff "$dir/a" "$dir/b" || rc=$?
  rm -rf "$dir"
  return "$rc"
}

# rxp_harness_device_fds PID: how many /dev/infiniband files process PID holds open.
rxp_harness_device_fds() {
  local n=0 fd
  for fd in /proc/"$1"/fd/*; do
    [[ $(readlink "$fd" 2>/dev/null) == /dev/infiniband/* ]] && n=$((n + 1))
  done
  echo "$n"
}
