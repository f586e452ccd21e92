# testbed.sh: sourced at the top of every VM test case. Exports the two-node description
# (RXP_NODE{0,1}_{DEV,IP,NETDEV,GID}) and helpers for client/server tests. vmctl exports
# RXP_SHARE (the results share, where the agent wrote testbed.env) for every request.
# shellcheck shell=bash
: "${RXP_SHARE:?testbed.sh runs inside the test-bed guest (vmctl exec sets RXP_SHARE)}"
set -a
# shellcheck disable=SC1091
source "$RXP_SHARE/testbed.env"
set +a

# rxp_wait_tcp PORT [SECONDS]: until something listens on TCP PORT (perftest, pingpongs).
rxp_wait_tcp() {
  local port=$1 limit=${2:-30} i
  for ((i = 0; i < limit * 10; i++)); do
    grep -q . <<<"$(ss -Hltn "sport = :$port" 2>/dev/null)" && return 0
    sleep 0.1
  done
  echo "testbed: nothing listens on TCP port $port after ${limit}s" >&2
  return 1
}

# rxp_wait_cm_listen [SECONDS]: until an rdma_cm id is listening (rping, ucmatose servers).
rxp_wait_cm_listen() {
  local limit=${1:-30} i
  for ((i = 0; i < limit * 10; i++)); do
    grep -q 'state LISTEN' <<<"$(rdma resource show cm_id 2>/dev/null)" && return 0
    sleep 0.1
  done
  echo "testbed: no rdma_cm id is listening after ${limit}s" >&2
  return 1
}

# rxp_link_packets NETDEV: packets sent by NETDEV so far.
rxp_link_packets() { cat "/sys/class/net/$1/statistics/tx_packets"; }

# rxp_pair WAIT SERVER_CMD -- CLIENT_CMD...: runs a server in the background, waits for it
# (WAIT is "tcp:PORT", "cm" or "none"), runs the client, waits for the server, prints both
# outputs with a prefix and fails if either side failed. Sets RXP_SERVER_OUT/RXP_CLIENT_OUT.
rxp_pair() {
  local wait=$1; shift
  local -a server=() client=()
  while (($#)) && [[ $1 != -- ]]; do server+=("$1"); shift; done
  shift
  client=("$@")
  local dir
  dir=$(mktemp -d)
  "${server[@]}" >"$dir/server" 2>&1 &
  local spid=$! src=0 crc=0
  case $wait in
    tcp:*) rxp_wait_tcp "${wait#tcp:}" || src=1 ;;
    cm) rxp_wait_cm_listen || src=1 ;;
    none) sleep 1 ;;
  esac
  if ((src == 0)); then
    "${client[@]}" >"$dir/client" 2>&1 || crc=$?
  else
    kill "$spid" 2>/dev/null
  fi
  wait "$spid" || src=$?
  RXP_SERVER_OUT=$(cat "$dir/server")
  RXP_CLIENT_OUT=$(cat "$dir/client" 2>/dev/null)
  sed 's/^/server| /' "$dir/server"
  sed 's/^/client| /' "$dir/client" 2>/dev/null
  rm -rf "$dir"
  if ((src != 0 || crc != 0)); then
    echo "testbed: server exit $src, client exit $crc" >&2
    return 1
  fi
}

# rxp_perftest_pair WAIT SERVER_CMD -- CLIENT_CMD...: rxp_pair (outputs discarded, kept in
# RXP_SERVER_OUT/RXP_CLIENT_OUT) for a perftest pair. perftest gives up when it cannot
# calibrate its cycle counter on a loaded emulated CPU ("Can't produce a report"), natively
# too: such a run is repeated (3 tries); any other failure shows both outputs and fails.
rxp_perftest_pair() {
  local attempt
  for attempt in 1 2 3; do
    if rxp_pair "$@" >/dev/null; then return 0; fi
    grep -q "Can't produce a report" <<<"$RXP_CLIENT_OUT$RXP_SERVER_OUT" || {
      echo "$RXP_SERVER_OUT" >&2; echo "$RXP_CLIENT_OUT" >&2; return 1; }
  done
  return 1
}

# rxp_perftest_average OUTPUT: the BW-average (MB/s) of a perftest bandwidth result row
# ("#bytes #iterations BW-peak BW-average MsgRate").
rxp_perftest_average() {
  awk 'NF == 5 && $1 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {r = $4} END {print r}' <<<"$1"
}

# rxp_expect TEXT PATTERN WHAT: fails the test unless TEXT matches the extended regex PATTERN.
rxp_expect() {
  if grep -qE -- "$2" <<<"$1"; then return 0; fi
  echo "testbed: expected $3 (/$2/), not found" >&2
  return 1
}
