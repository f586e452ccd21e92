# Diagnoses the conformance suite (suite.sh) makes of a failed run, one function each; sourced
# by suite.sh, and tested on recorded snapshots by diagnose_test.sh (unit.conformance.diagnose).
# They read the run's files in $work: TAG.status ("SERVER_STATUS CLIENT_STATUS"), TAG.server,
# TAG.client and, for a side that timed out, TAG.{server,client}.hang (suite.sh, limited).

# fi_rows FILE: fi_pingpong's result rows ("64 500 =500": size, messages sent, acknowledged).
fi_rows() { awk '$1 ~ /^[0-9]+[kmg]?$/ && $2 ~ /^[0-9]+$/ {printf "%s%s %s %s", (n++ ? "; " : ""), $1, $2, $3}' "$1"; }

# fi_pingpong's finalize (util/pingpong.c, pp_finalize) races the kernel: each side sends "fin",
# waits for that send's completion and for the peer's fin, and exits at once, destroying its
# QP. A side's fin completes only when the peer's ACK arrives, and the peer may have torn down
# before sending it: its responder posts the receive's completion first and the ACK after
# (rxe_responder: do_complete, then acknowledge), and Linux 6.1's rxe drops an ACK from a QP no
# longer in the ready state (rxe_xmit_packet). The sender then resends its fin to a QP that no
# longer exists, forever: libfabric asks rdma_cm for retry_count 15, which becomes 7, and rxe
# never counts 7 down (rxe_completer; seen here on both guest kernels with ib_write_bw and a
# killed server). It polls its CQ until it is stopped. Seen 4 times in about 100 proxied pairs
# of full test runs on the 6.1 guest (docs/harness.md, "fi_pingpong's finalize").
# fi_lost_final_ack TAG: says so, and succeeds, only when the pair's failure is exactly that --
# one side timed out after printing the same results as the other, which exited 0 (so it had
# received the hung side's fin); the hung side's send queue holds one request the kernel never
# completed; and the QP it is connected to exists no more. Anything else stays a failure.
fi_lost_final_ack() {
  local tag=$1 s c hung other rows
  read -r s c <"$work/$tag.status" 2>/dev/null || return 1
  if [[ $s == 0 && $c == 124 ]]; then hung=client other=server
  elif [[ $s == 124 && $c == 0 ]]; then hung=server other=client
  else return 1
  fi
  rows=$(fi_rows "$work/$tag.$hung")
  [[ -n $rows && $rows == "$(fi_rows "$work/$tag.$other")" && -s $work/$tag.$hung.hang ]] || return 1
  awk -v hung="$hung" '
    /^process [0-9]+:/ { p = $2; sub(":", "", p); mine[p] = 1 }
    # rxe send queue entries are 256 bytes or more (struct rxe_send_wqe), CQ and receive
    # queue entries 128 (queue_indexes).
    / queue .* entries of [0-9]+ bytes, producer [0-9]+, consumer [0-9]+$/ {
      n = split($0, w, " "); size = w[n - 5]; prod = w[n - 2]; cons = w[n]
      sub(",", "", prod)
      if (size >= 256 && prod == cons + 1) sq = "producer " prod ", consumer " cons
    }
    /^rdma resource show qp:/ { inqp = 1; next }
    /^rdma resource show cq:/ { inqp = 0 }
    inqp && $1 == "link" {
      for (i = 1; i < NF; i++) f[$i] = $(i + 1)
      qps[++nqp] = $2 " " f["lqpn"]
      if (f["type"] == "RC" && f["state"] == "RTS" && (f["pid"] in mine)) {
        qp = f["lqpn"]; peer = f["rqpn"]; dev = $2
      }
      delete f
    }
    END {
      if (sq == "" || qp == "") exit 1
      # The peer is on the other node, or on the same device in loopback; QP numbers are per
      # device, so only the hung QP itself is ruled out by its number.
      for (i = 1; i <= nqp; i++) {
        split(qps[i], d, " ")
        if (d[2] == peer && qps[i] != dev " " qp) exit 1
      }
      printf "the %s waits for the ACK of its fin from a QP that no longer exists (its QP %s on %s, RTS, peer QP %s gone; its send queue %s), a race in fi_pingpong'"'"'s finalize\n", hung, qp, dev, peer, sq
    }' "$work/$tag.$hung.hang"
}
