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
# The same race ends other pairs whose last message is answered by the peer's exit: rdma_server
# sends its reply, rdma_client receives it, prints "end 0" and disconnects, and the server waits
# for that send's completion (seen once in a full test run on the 6.1 guest, proxied; librdmacm's
# rdma_accept asks for retry_count 7 itself).

# hung_side TAG: "HUNG OTHER" ("client server" or "server client") when exactly one side of the
# pair timed out and the other exited 0; fails otherwise.
hung_side() {
  local s c
  read -r s c <"$work/$1.status" 2>/dev/null || return 1
  if [[ $s == 0 && $c == 124 ]]; then echo "client server"
  elif [[ $s == 124 && $c == 0 ]]; then echo "server client"
  else return 1
  fi
}

# lost_final_ack TAG: says so, and succeeds, only when the hung side (hung_side) waits for the
# ACK of its last send from a QP that no longer exists: its hang dump shows its send queue one
# request behind (the kernel never completed it), its RC QP in RTS and the QP it is connected to
# gone. Anything else stays a failure. The callers add what the program's own output must show.
lost_final_ack() {
  local tag=$1 hung other
  read -r hung other <<<"$(hung_side "$tag")" && [[ -n $hung && -s $work/$tag.$hung.hang ]] || return 1
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
      printf "the %s waits for the ACK of its last send from a QP that no longer exists (its QP %s on %s, RTS, peer QP %s gone; its send queue %s)", hung, qp, dev, peer, sq
    }' "$work/$tag.$hung.hang"
}

# fi_lost_final_ack TAG: lost_final_ack, where the hung side printed the same results as the
# other (which had received the hung side's fin).
fi_lost_final_ack() {
  local tag=$1 hung other rows why
  read -r hung other <<<"$(hung_side "$tag")" && [[ -n $hung ]] || return 1
  rows=$(fi_rows "$work/$tag.$hung")
  [[ -n $rows && $rows == "$(fi_rows "$work/$tag.$other")" ]] || return 1
  why=$(lost_final_ack "$tag") || return 1
  echo "$why, a race in fi_pingpong's finalize"
}

# cm_lost_final_ack EXPECT TAG: lost_final_ack, where the side that ended had received the hung
# side's last message: a hung server's client printed EXPECT, the case's own line for a completed
# exchange (rdma_client's "end 0": it received the server's reply); a hung client's server exited
# 0, which an rdma_cm example server does only once it has received what it waits for
# (rdma_server: its receive's completion). The 6.1 guest showed the first shape proxied, and a
# native rdma_client pair timed out in the second (client 124, server 0; dump not kept).
cm_lost_final_ack() {
  local expect=$1 tag=$2 hung other why
  read -r hung other <<<"$(hung_side "$tag")" && [[ -n $hung ]] || return 1
  if [[ $hung == server ]]; then
    grep -q -- "$expect" "$work/$tag.client" 2>/dev/null || return 1
  fi
  why=$(lost_final_ack "$tag") || return 1
  echo "$why, its peer having received it and ended"
}
