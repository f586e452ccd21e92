#!/bin/bash
# diagnose_test.sh: the suite's failure diagnoses (diagnose.sh) on a recorded hang dump and on
# variations of it; each variation that breaks one condition must leave the failure standing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/diagnose.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
tag=fi_64B.proxied
results='bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec
64      500     =500     62k         2.30s      0.03    2296.42       0.00'

# verdict NAME WANT DIAGNOSIS ARGS...: DIAGNOSIS ARGS... on the files in $work must find the
# race (WANT "race") or leave the failure standing (WANT "failure").
verdict() {
  local name=$1 want=$2 got why
  shift 2
  if why=$("$@"); then got=race; else got=failure; fi
  if [[ $got == "$want" ]]; then
    echo "ok: $name: $got${why:+ ($why)}"
  else
    echo "FAILED: $name: got $got, want $want${why:+ ($why)}"
    failures=$((failures + 1))
  fi
}

# case NAME WANT STATUS EDIT: the recorded run, its status replaced and the dump edited by the
# sed script EDIT (empty: as recorded).
case_() {
  local name=$1 want=$2 status=$3 edit=$4
  echo "$status" >"$work/$tag.status"
  printf '%s\n' "$results" >"$work/$tag.server"
  printf '%s\n' "$results" >"$work/$tag.client"
  sed -e "$edit" "$here/fixtures/fi_lost_final_ack.client.hang" >"$work/$tag.client.hang"
  [[ $name == rows* ]] && sed -i 's/=500/=499/' "$work/$tag.client"
  verdict "$name" "$want" fi_lost_final_ack "$tag"
}

case_ "as recorded" race "0 124" ""
case_ "QP numbers alike on both devices, peer gone" race "0 124" 's/lqpn 246 rqpn 224/lqpn 224 rqpn 224/'
case_ "both sides timed out" failure "124 124" ""
case_ "the server failed" failure "1 124" ""
case_ "rows differ" failure "0 124" ""
case_ "the peer QP still exists" failure "0 124" \
  's/^  link rxe1\/1 lqpn 1 type GSI/  link rxe1\/1 lqpn 224 rqpn 246 type RC state ERR pid 3000 comm x\n&/'
case_ "QP numbers alike, the peer still exists" failure "0 124" \
  's/lqpn 246 rqpn 224/lqpn 224 rqpn 224/; s/^  link rxe1\/1 lqpn 1 type GSI/  link rxe1\/1 lqpn 224 rqpn 224 type RC state RTS pid 3000 comm x\n&/'
case_ "the send queue drained (only a CQ holds an unread entry)" failure "0 124" \
  '0,/512 bytes, producer 501, consumer 500/s//512 bytes, producer 501, consumer 501/'
case_ "two requests outstanding" failure "0 124" \
  '0,/512 bytes, producer 501, consumer 500/s//512 bytes, producer 502, consumer 500/'
case_ "the QP is another process's" failure "0 124" 's/pid 2059 comm rdmaproxy/pid 999 comm x/'
case_ "the QP is in error" failure "0 124" 's/type RC state RTS rq-psn/type RC state ERR rq-psn/'
case_ "no rxe queues in the dump (another driver)" failure "0 124" '/^  queue /d'

# The same for rdma_server / rdma_client (cm_lost_final_ack): the server hung after its reply.
# cm_case_ NAME WANT STATUS EDIT [CLIENT_OUTPUT [HUNG]]: HUNG (default server) is the side whose
# hang dump is the recorded one.
cm_case_() {
  local name=$1 want=$2 status=$3 edit=$4 client=${5:-$'rdma_client: start\nrdma_client: end 0'}
  local hung=${6:-server} tag=rdma_client.proxied
  echo "$status" >"$work/$tag.status"
  printf 'rdma_server: start\n' >"$work/$tag.server"
  printf '%b\n' "$client" >"$work/$tag.client"
  rm -f "$work/$tag".*.hang
  sed -e "$edit" "$here/fixtures/cm_lost_final_ack.server.hang" >"$work/$tag.$hung.hang"
  verdict "rdma_client: $name" "$want" cm_lost_final_ack '^rdma_client: end 0' "$tag"
}
cm_case_ "as recorded" race "124 0" ""
cm_case_ "the client did not end 0" failure "124 0" "" 'rdma_client: start\nrdma_client: end -1'
cm_case_ "the client timed out too" failure "124 124" ""
cm_case_ "the client failed" failure "124 1" ""
cm_case_ "the peer QP still exists" failure "124 0" \
  's/^  link rxe0\/1 lqpn 1 type GSI/  link rxe0\/1 lqpn 100 rqpn 102 type RC state RTS pid 3000 comm x\n&/'
cm_case_ "the send queue drained" failure "124 0" \
  's/256 bytes, producer 1, consumer 0/256 bytes, producer 1, consumer 1/'
cm_case_ "the QP is in error" failure "124 0" 's/type RC state RTS rq-psn/type RC state ERR rq-psn/'
# The client hung instead, its server having ended 0: the same dump, as the client's.
cm_case_ "the client hung, the server ended 0" race "0 124" "" 'rdma_client: start' client
cm_case_ "the client hung, the server failed" failure "1 124" "" 'rdma_client: start' client
cm_case_ "the client hung, its peer QP still exists" failure "0 124" \
  's/^  link rxe0\/1 lqpn 1 type GSI/  link rxe0\/1 lqpn 100 rqpn 102 type RC state RTS pid 3000 comm x\n&/' \
  'rdma_client: start' client
cm_case_ "the client hung, no dump of it" failure "0 124" "" 'rdma_client: start' server

echo "diagnose: $failures failed"
((failures == 0))
