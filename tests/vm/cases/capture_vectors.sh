#!/bin/bash
# capture_vectors.sh BUILD_DIR OUT_DIR: runs real rdma-core programs under the capture shim
# (tests/tools/capture_preload.cc) and writes one vector file per program and side into
# OUT_DIR. Small iteration counts keep the files small; --events runs exercise the completion
# channel. Run by tests/vm/recapture-vectors.sh, which copies the result to tests/data/vectors.
set -euo pipefail
source "$(dirname "$0")/../guest/testbed.sh"
build=${1:?usage: capture_vectors.sh BUILD_DIR OUT_DIR}
out=${2:?usage: capture_vectors.sh BUILD_DIR OUT_DIR}
lib=$build/tests/tools/librxp_capture.so
mkdir -p "$out"
rm -f "$out"/*.jsonl

cap() {  # cap NAME cmd...: run cmd with the shim writing OUT/NAME.jsonl
  local name=$1
  shift
  env RXP_CAPTURE="$out/$name.jsonl" LD_PRELOAD="$lib" "$@"
}
d0=$RXP_NODE0_DEV g0=$RXP_NODE0_GID d1=$RXP_NODE1_DEV g1=$RXP_NODE1_GID ip1=$RXP_NODE1_IP

cap ibv_devices ibv_devices
cap ibv_devinfo ibv_devinfo -v -d "$d0"

pair() {  # pair NAME WAIT server-args -- client-args (the program is the first word of each)
  local name=$1 wait=$2
  shift 2
  local -a server=() client=()
  while [[ $1 != -- ]]; do server+=("$1"); shift; done
  shift
  client=("$@")
  rxp_pair "$wait" cap "${name}_server" "${server[@]}" -- cap "${name}_client" "${client[@]}"
}

pair rc_pingpong tcp:18515 ibv_rc_pingpong -d "$d1" -g "$g1" -n 3 -- \
  ibv_rc_pingpong -d "$d0" -g "$g0" -n 3 "$ip1"
pair rc_pingpong_events tcp:18515 ibv_rc_pingpong -d "$d1" -g "$g1" -n 3 -e -- \
  ibv_rc_pingpong -d "$d0" -g "$g0" -n 3 -e "$ip1"
pair ud_pingpong tcp:18515 ibv_ud_pingpong -d "$d1" -g "$g1" -n 3 -- \
  ibv_ud_pingpong -d "$d0" -g "$g0" -n 3 "$ip1"
pair srq_pingpong tcp:18515 ibv_srq_pingpong -d "$d1" -g "$g1" -n 3 -q 2 -- \
  ibv_srq_pingpong -d "$d0" -g "$g0" -n 3 -q 2 "$ip1"
# rxe has no XRC: OPEN_XRCD fails with EOPNOTSUPP natively; the failing exchange is a vector too.
cap xsrq_pingpong ibv_xsrq_pingpong -d "$d0" -g "$g0" -n 2 || true
pair ib_write_bw tcp:18515 ib_write_bw -d "$d1" -x "$g1" -n 5 -- \
  ib_write_bw -d "$d0" -x "$g0" -n 5 "$ip1"
pair ib_read_bw tcp:18515 ib_read_bw -d "$d1" -x "$g1" -n 5 -- \
  ib_read_bw -d "$d0" -x "$g0" -n 5 "$ip1"
pair ib_send_bw tcp:18515 ib_send_bw -d "$d1" -x "$g1" -n 5 -- \
  ib_send_bw -d "$d0" -x "$g0" -n 5 "$ip1"
pair ib_atomic_bw tcp:18515 ib_atomic_bw -d "$d1" -x "$g1" -n 5 -- \
  ib_atomic_bw -d "$d0" -x "$g0" -n 5 "$ip1"
pair rping cm rping -s -a "$ip1" -C 2 -- rping -c -a "$ip1" -C 2
pair ucmatose cm ucmatose -b "$ip1" -C 2 -- ucmatose -s "$ip1" -C 2

ls -la "$out"
