// rxp_verbs_exercise DEVICE GID_INDEX: calls the verbs the proxy allows by default on one RDMA
// device, with real traffic over loopback RC and UD QPs, and prints one line per step with
// only run-independent facts (no keys, QPNs or addresses), so that a native run and a run
// under `rdmaproxy run` can be compared byte for byte. Covered: device/port/GID queries, PD,
// MR (+ rereg, through rdma-core and by hand), MW (type 1 and 2, bind), completion channel +
// ibv_req_notify_cq + epoll with O_NONBLOCK, CQ (+ resize), RC and UD QPs, SRQ (+ modify,
// query, limit event), AH, multicast attach/detach with a datagram to the group, async
// events, the legacy write() ABI issued by hand on the command fd, the fork protection
// status (copy-on-fork over RDMA netlink), verbs a device may lack (XRC domain, WQ, device
// memory, MR advice, CQ moderation, context and PD import: on rxe their errnos are compared),
// the legacy GET_CONTEXT through INVOKE_WRITE (rdma-core's fallback) with a CQ on its async
// event fd, an implicit ODP MR,
// and error paths (bad handles, unmapped memory, a non-RDMA fd as a completion channel, a bad
// completion vector): their errnos are printed, and must match native.
//
// Exit status: 0 when every step that must succeed did and the data arrived intact.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "raw_ioctl.h"
#include "verbs_steps.h"

namespace {

using namespace rxp_conformance;

constexpr size_t kBuf = 64 * 1024;

// A legacy write() command on the command fd: header + body, response `resp` of resp_len.
template <typename Req>
int LegacyWrite(int fd, uint32_t command, const Req& req, size_t resp_len) {
  std::vector<unsigned char> msg(sizeof(ib_uverbs_cmd_hdr) + sizeof(Req));
  ib_uverbs_cmd_hdr hdr{};
  hdr.command = command;
  hdr.in_words = static_cast<uint16_t>(msg.size() / 4);
  hdr.out_words = static_cast<uint16_t>(resp_len / 4);
  std::memcpy(msg.data(), &hdr, sizeof(hdr));
  std::memcpy(msg.data() + sizeof(hdr), &req, sizeof(Req));
  return write(fd, msg.data(), msg.size()) == static_cast<ssize_t>(msg.size()) ? 0 : errno;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rxp_verbs_exercise DEVICE GID_INDEX\n");
    return 2;
  }
  const char* devname = argv[1];
  const int gid_index = std::atoi(argv[2]);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  // --- device, queries -------------------------------------------------------------------
  ibv_context* ctx = OpenDeviceNamed(devname);
  // libibverbs learns the index only from RDMA netlink (find_sysfs_devs_nl()); librdmacm
  // orders rdma_get_devices() by it.
  Ok("device_index", "%d", ibv_get_device_index(ctx->device));

  // Whether the kernel keeps registered memory across fork (RDMA netlink's COPY_ON_FORK, which
  // rdma-core asks in get_copy_on_fork()): UNNEEDED natively on Linux >= 5.13, and the same
  // under the proxy, or ibv_fork_init() -- UCX and libfabric call it -- would madvise every
  // registered buffer away from forked children.
  auto fork_status = [] {
    switch (ibv_is_fork_initialized()) {
      case IBV_FORK_DISABLED: return "disabled";
      case IBV_FORK_ENABLED: return "enabled";
      case IBV_FORK_UNNEEDED: return "unneeded";
    }
    return "?";
  };
  Ok("fork_status", "%s", fork_status());
  Outcome("fork_init", ibv_fork_init());
  Ok("fork_status_after_init", "%s", fork_status());

  ibv_device_attr_ex dattr{};
  if (ibv_query_device_ex(ctx, nullptr, &dattr)) Die("query_device", "ibv_query_device_ex");
  Ok("query_device", "ports=%d max_qp>0=%d max_srq>0=%d", dattr.orig_attr.phys_port_cnt,
     dattr.orig_attr.max_qp > 0, dattr.orig_attr.max_srq > 0);
  ibv_port_attr pattr{};
  if (ibv_query_port(ctx, 1, &pattr)) Die("query_port", "ibv_query_port");
  Ok("query_port", "state=%s link_layer=%d", ibv_port_state_str(pattr.state), pattr.link_layer);
  ibv_gid_entry gent{};
  if (ibv_query_gid_ex(ctx, 1, static_cast<uint32_t>(gid_index), &gent, 0))
    Die("query_gid", "ibv_query_gid_ex");
  ibv_gid gid;
  std::memcpy(&gid, &gent.gid, sizeof(gid));
  Ok("query_gid", "index=%u type=%u", gent.gid_index, gent.gid_type);
  std::vector<ibv_gid_entry> table(static_cast<size_t>(pattr.gid_tbl_len));
  const ssize_t ngids = ibv_query_gid_table(ctx, table.data(), table.size(), 0);
  if (ngids <= 0) Die("query_gid_table", "ibv_query_gid_table");
  Ok("query_gid_table", "entries>0=1");

  // --- PD, MR, MW ------------------------------------------------------------------------
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) Die("alloc_pd", "ibv_alloc_pd");
  Ok("alloc_pd");
  auto* buf = static_cast<char*>(aligned_alloc(4096, kBuf));
  auto* buf2 = static_cast<char*>(aligned_alloc(4096, kBuf));
  std::memset(buf, 0, kBuf);
  std::memset(buf2, 0, kBuf);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                     IBV_ACCESS_MW_BIND;
  ibv_mr* mr = ibv_reg_mr(pd, buf, kBuf, access);
  if (mr == nullptr) Die("reg_mr", "ibv_reg_mr");
  Ok("reg_mr", "length=%zu", mr->length);
  Outcome("rereg_mr_access", ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                                          access | IBV_ACCESS_REMOTE_ATOMIC) == 0
                                 ? 0
                                 : errno);
  Outcome("rereg_mr_translation",
          ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, buf, kBuf, 0) == 0 ? 0
                                                                                        : errno);
  ibv_mr* mr2 = ibv_reg_mr(pd, buf2, kBuf, access);
  if (mr2 == nullptr) Die("reg_mr2", "ibv_reg_mr");
  ibv_mw* mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
  Outcome("alloc_mw_type1", mw1 != nullptr ? 0 : errno);
  ibv_mw* mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
  Outcome("alloc_mw_type2", mw2 != nullptr ? 0 : errno);

  // --- completion channel, CQ, epoll ---------------------------------------------------
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  if (ch == nullptr) Die("comp_channel", "ibv_create_comp_channel");
  if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) != 0)
    Die("comp_channel", "fcntl O_NONBLOCK");
  Ok("comp_channel", "nonblocking=%d", (fcntl(ch->fd, F_GETFL) & O_NONBLOCK) != 0);
  ibv_cq* cq = ibv_create_cq(ctx, 64, nullptr, ch, 0);
  if (cq == nullptr) Die("create_cq", "ibv_create_cq");
  Ok("create_cq", "cqe>=64=%d", cq->cqe >= 64);
  Outcome("resize_cq", ibv_resize_cq(cq, 128) == 0 ? 0 : errno);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev) != 0) Die("epoll", "epoll_ctl");
  char dummy[8];
  Outcome("comp_channel_empty_read", read(ch->fd, dummy, sizeof(dummy)) < 0 ? errno : 0);

  // --- RC loopback: SEND with a completion event, RDMA WRITE --------------------------
  ibv_qp_init_attr qia{};
  qia.send_cq = cq;
  qia.recv_cq = cq;
  qia.qp_type = IBV_QPT_RC;
  qia.cap = {16, 16, 1, 1, 0};
  Loopback rc;
  rc.a = ibv_create_qp(pd, &qia);
  rc.b = ibv_create_qp(pd, &qia);
  if (rc.a == nullptr || rc.b == nullptr) Die("create_qp_rc", "ibv_create_qp");
  Ok("create_qp_rc");
  if (ToInit(rc.a, IBV_QPT_RC) || ToInit(rc.b, IBV_QPT_RC) ||
      RcToRts(rc.a, rc.b->qp_num, gid, gid_index) || RcToRts(rc.b, rc.a->qp_num, gid, gid_index))
    Die("modify_qp_rc", "ibv_modify_qp");
  ibv_qp_attr qattr{};
  ibv_qp_init_attr qinit{};
  if (ibv_query_qp(rc.a, &qattr, IBV_QP_STATE, &qinit)) Die("query_qp", "ibv_query_qp");
  Ok("modify_qp_rc", "state=%d", qattr.qp_state);

  if (ibv_req_notify_cq(cq, 0)) Die("req_notify_cq", "ibv_req_notify_cq");
  std::strcpy(buf, "hello over a proxied RC loopback");
  ibv_sge rsge{reinterpret_cast<uint64_t>(buf2), 256, mr2->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 1;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* bad_r = nullptr;
  if (ibv_post_recv(rc.b, &rwr, &bad_r)) Die("post_recv", "ibv_post_recv");
  ibv_sge ssge{reinterpret_cast<uint64_t>(buf), 64, mr->lkey};
  ibv_send_wr swr{};
  swr.wr_id = 2;
  swr.sg_list = &ssge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad_s = nullptr;
  if (ibv_post_send(rc.a, &swr, &bad_s)) Die("post_send", "ibv_post_send");
  epoll_event got{};
  const int n = epoll_wait(ep, &got, 1, 10000);
  if (n != 1) {
    Fail("cq_event", "epoll_wait returned %d", n);
  } else {
    ibv_cq* ev_cq = nullptr;
    void* ev_ctx = nullptr;
    if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) Die("cq_event", "ibv_get_cq_event");
    ibv_ack_cq_events(ev_cq, 1);
    Ok("cq_event", "same_cq=%d", ev_cq == cq);
  }
  ibv_wc wc[4];
  const int polled = PollFor(cq, 2, wc);
  bool send_ok = polled == 2 && wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS;
  if (send_ok && std::strcmp(buf2, "hello over a proxied RC loopback") == 0)
    Ok("send_recv", "bytes=64");
  else
    Fail("send_recv", "polled=%d data=%.20s", polled, buf2);

  std::strcpy(buf + 1024, "written by RDMA WRITE");
  ssge = {reinterpret_cast<uint64_t>(buf + 1024), 32, mr->lkey};
  swr = {};
  swr.wr_id = 3;
  swr.sg_list = &ssge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_RDMA_WRITE;
  swr.send_flags = IBV_SEND_SIGNALED;
  swr.wr.rdma.remote_addr = reinterpret_cast<uint64_t>(buf2 + 2048);
  swr.wr.rdma.rkey = mr2->rkey;
  if (ibv_post_send(rc.a, &swr, &bad_s)) Die("rdma_write", "ibv_post_send");
  if (PollFor(cq, 1, wc) == 1 && wc[0].status == IBV_WC_SUCCESS &&
      std::strcmp(buf2 + 2048, "written by RDMA WRITE") == 0)
    Ok("rdma_write", "bytes=32");
  else
    Fail("rdma_write", "status=%d", wc[0].status);

  // Bind a type-1 MW and read through its rkey.
  if (mw1 != nullptr) {
    ibv_mw_bind bind{};
    bind.wr_id = 4;
    bind.send_flags = IBV_SEND_SIGNALED;
    bind.bind_info.mr = mr;
    bind.bind_info.addr = reinterpret_cast<uint64_t>(buf);
    bind.bind_info.length = 4096;
    bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    const int br = ibv_bind_mw(rc.a, mw1, &bind);
    const bool bound = br == 0 && PollFor(cq, 1, wc) == 1 && wc[0].status == IBV_WC_SUCCESS;
    Outcome("bind_mw_type1", br != 0 ? br : bound ? 0 : EIO);
  }

  // --- SRQ: create, modify (rxe resizes through MODIFY_SRQ's mmap_info_addr), limit event --
  ibv_srq_init_attr sia{};
  sia.attr = {16, 1, 0};
  ibv_srq* srq = ibv_create_srq(pd, &sia);
  if (srq == nullptr) Die("create_srq", "ibv_create_srq");
  Ok("create_srq");
  ibv_srq_attr sattr{};
  sattr.max_wr = 64;
  Outcome("modify_srq_max_wr", ibv_modify_srq(srq, &sattr, IBV_SRQ_MAX_WR) == 0 ? 0 : errno);
  ibv_srq_attr qs{};
  if (ibv_query_srq(srq, &qs)) Die("query_srq", "ibv_query_srq");
  Ok("query_srq", "max_wr>=16=%d", qs.max_wr >= 16);
  ibv_qp_init_attr sqa = qia;
  sqa.srq = srq;
  ibv_qp* srq_qp = ibv_create_qp(pd, &sqa);
  ibv_qp* srq_peer = ibv_create_qp(pd, &qia);
  if (srq_qp == nullptr || srq_peer == nullptr) Die("create_qp_srq", "ibv_create_qp");
  if (ToInit(srq_qp, IBV_QPT_RC) || ToInit(srq_peer, IBV_QPT_RC) ||
      RcToRts(srq_qp, srq_peer->qp_num, gid, gid_index) ||
      RcToRts(srq_peer, srq_qp->qp_num, gid, gid_index))
    Die("modify_qp_srq", "ibv_modify_qp");
  for (int i = 0; i < 8; ++i) {
    ibv_sge sg{reinterpret_cast<uint64_t>(buf2 + 4096 + 256 * i), 256, mr2->lkey};
    ibv_recv_wr w{};
    w.wr_id = 100 + static_cast<uint64_t>(i);
    w.sg_list = &sg;
    w.num_sge = 1;
    if (ibv_post_srq_recv(srq, &w, &bad_r)) Die("post_srq_recv", "ibv_post_srq_recv");
  }
  sattr = {};
  sattr.srq_limit = 6;
  Outcome("arm_srq_limit", ibv_modify_srq(srq, &sattr, IBV_SRQ_LIMIT) == 0 ? 0 : errno);
  for (int i = 0; i < 3; ++i) {
    ssge = {reinterpret_cast<uint64_t>(buf), 16, mr->lkey};
    swr = {};
    swr.wr_id = 200 + static_cast<uint64_t>(i);
    swr.sg_list = &ssge;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_SEND;
    swr.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_send(srq_peer, &swr, &bad_s)) Die("srq_send", "ibv_post_send");
  }
  Ok("srq_traffic", "completions=%d", PollFor(cq, 6, wc));

  // Async events: the SRQ limit event (if the provider raises it), read without blocking.
  if (fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) != 0)
    Die("async", "fcntl");
  pollfd apf{ctx->async_fd, POLLIN, 0};
  const int ready = poll(&apf, 1, 2000);
  if (ready == 1) {
    ibv_async_event aev{};
    if (ibv_get_async_event(ctx, &aev)) Die("async_event", "ibv_get_async_event");
    Ok("async_event", "type=%s", ibv_event_type_str(aev.event_type));
    ibv_ack_async_event(&aev);
  } else {
    Ok("async_event", "none");
  }

  // --- UD with an AH --------------------------------------------------------------------
  ibv_qp_init_attr uia = qia;
  uia.qp_type = IBV_QPT_UD;
  ibv_qp* ud_a = ibv_create_qp(pd, &uia);
  ibv_qp* ud_b = ibv_create_qp(pd, &uia);
  if (ud_a == nullptr || ud_b == nullptr) Die("create_qp_ud", "ibv_create_qp");
  if (ToInit(ud_a, IBV_QPT_UD) || ToInit(ud_b, IBV_QPT_UD) || UdToRts(ud_a) || UdToRts(ud_b))
    Die("modify_qp_ud", "ibv_modify_qp");
  ibv_ah_attr aha{};
  aha.is_global = 1;
  aha.grh.dgid = gid;
  aha.grh.sgid_index = static_cast<uint8_t>(gid_index);
  aha.grh.hop_limit = 1;
  aha.port_num = 1;
  ibv_ah* ah = ibv_create_ah(pd, &aha);
  if (ah == nullptr) Die("create_ah", "ibv_create_ah");
  Ok("create_ah");
  ibv_sge ug{reinterpret_cast<uint64_t>(buf2 + 32768), 512, mr2->lkey};
  ibv_recv_wr ur{};
  ur.wr_id = 300;
  ur.sg_list = &ug;
  ur.num_sge = 1;
  if (ibv_post_recv(ud_b, &ur, &bad_r)) Die("ud_recv", "ibv_post_recv");
  std::strcpy(buf + 8192, "a UD datagram");
  ssge = {reinterpret_cast<uint64_t>(buf + 8192), 32, mr->lkey};
  swr = {};
  swr.wr_id = 301;
  swr.sg_list = &ssge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  swr.wr.ud.ah = ah;
  swr.wr.ud.remote_qpn = ud_b->qp_num;
  swr.wr.ud.remote_qkey = 0x11111111;
  if (ibv_post_send(ud_a, &swr, &bad_s)) Die("ud_send", "ibv_post_send");
  if (PollFor(cq, 2, wc) == 2 && std::strcmp(buf2 + 32768 + 40, "a UD datagram") == 0)
    Ok("ud_send_recv", "bytes=32");
  else
    Fail("ud_send_recv", "datagram did not arrive");

  // --- multicast: a UD QP joins a group, a datagram sent to the group, the QP leaves --------
  // ibv_attach_mcast / ibv_detach_mcast (ATTACH_MCAST / DETACH_MCAST, via INVOKE_WRITE; what
  // rdma_join_multicast does after the CM join). On RoCE a group's GID is its IPv4-mapped
  // multicast address. The kernel's checks are compared too: a non-multicast GID and a non-UD
  // QP are EINVAL (ib_attach_mcast), a second attach of the same group is a no-op
  // (ib_uverbs_attach_mcast), and a detach of a group the QP is not in fails in the driver.
  {
    ibv_gid group{};
    const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 255, 71, 17};
    std::memcpy(group.raw, mapped, sizeof(mapped));
    Outcome("attach_mcast", ibv_attach_mcast(ud_b, &group, 0));
    Outcome("attach_mcast_again", ibv_attach_mcast(ud_b, &group, 0));
    Outcome("attach_mcast_unicast_gid", ibv_attach_mcast(ud_b, &gid, 0));
    Outcome("attach_mcast_rc_qp", ibv_attach_mcast(rc.a, &group, 0));
    ibv_ah_attr maha = aha;
    maha.grh.dgid = group;
    ibv_ah* mah = ibv_create_ah(pd, &maha);
    if (mah == nullptr) Die("create_ah_mcast", "ibv_create_ah");
    ur.wr_id = 310;
    std::memset(buf2 + 32768, 0, 512);
    if (ibv_post_recv(ud_b, &ur, &bad_r)) Die("mcast_recv", "ibv_post_recv");
    std::strcpy(buf + 8192, "a multicast datagram");
    swr.wr_id = 311;
    swr.wr.ud.ah = mah;
    swr.wr.ud.remote_qpn = 0xffffff;  // the multicast QPN
    if (ibv_post_send(ud_a, &swr, &bad_s)) Die("mcast_send", "ibv_post_send");
    // The send must complete. Whether the group member on the same device gets the datagram
    // is the driver's: rxe does not loop multicast back to its own QPs, mlx5 does unless the
    // QP blocks self-loopback. Either way it must be what happens natively.
    if (PollFor(cq, 1, wc) == 1 && wc[0].wr_id == 311 && wc[0].status == IBV_WC_SUCCESS)
      Ok("mcast_send");
    else
      Fail("mcast_send", "the send to the group did not complete");
    bool looped_back = false;
    for (int spins = 0; spins < 5000 && !looped_back; ++spins) {
      const int r = ibv_poll_cq(cq, 1, wc);
      if (r > 0) looped_back = wc[0].wr_id == 310 && wc[0].status == IBV_WC_SUCCESS;
      if (r == 0) usleep(100);
    }
    if (!looped_back)
      Ok("mcast_loopback", "not looped back");
    else if (std::strcmp(buf2 + 32768 + 40, "a multicast datagram") == 0)
      Ok("mcast_loopback", "arrived intact");
    else
      Fail("mcast_loopback", "the looped-back datagram is not what was sent");
    Outcome("detach_mcast", ibv_detach_mcast(ud_b, &group, 0));
    Outcome("detach_mcast_not_attached", ibv_detach_mcast(ud_b, &group, 0));
    if (ibv_destroy_ah(mah)) Die("destroy_ah_mcast", "ibv_destroy_ah");
  }

  // --- the legacy write() ABI, by hand on the command fd -------------------------------
  {
    ib_uverbs_alloc_pd_resp pr{};
    ib_uverbs_alloc_pd ap{};
    ap.response = reinterpret_cast<uint64_t>(&pr);
    const int e = LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_ALLOC_PD, ap, sizeof(pr));
    Outcome("legacy_alloc_pd", e);
    ib_uverbs_query_device_resp qd{};
    ib_uverbs_query_device q{};
    q.response = reinterpret_cast<uint64_t>(&qd);
    Outcome("legacy_query_device",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_QUERY_DEVICE, q, sizeof(qd)));
    Ok("legacy_query_device_agrees", "%d", qd.max_qp == static_cast<uint32_t>(dattr.orig_attr.max_qp));
    ib_uverbs_query_port_resp qp{};
    ib_uverbs_query_port qpr{};
    qpr.response = reinterpret_cast<uint64_t>(&qp);
    qpr.port_num = 1;
    Outcome("legacy_query_port",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_QUERY_PORT, qpr, sizeof(qp)));
    // REREG_MR by hand: rxe's provider answers ibv_rereg_mr with EOPNOTSUPP without asking
    // the kernel (above), so only a hand-built command reaches ib_uverbs_rereg_mr there; the
    // kernel's rxe_rereg_user_mr takes an access change and refuses a new translation. The
    // proxy translates `start` and holds the pinned bytes of a translation change until the
    // kernel answers; a refusal gives them back (the engine's unit test "REREG_MR: the pinned
    // quota follows a new translation ..." checks that accounting). A REREG_MR of a handle the
    // file does not own is ENOENT where the device has rereg (rxe on Linux 6.12), and
    // EOPNOTSUPP where it lacks it (rxe on 6.1): the kernel looks the method up first, and so
    // must the proxy (docs/ABI.md, "Methods a device does not implement").
    ib_uverbs_rereg_mr_resp rr{};
    ib_uverbs_rereg_mr rm{};
    rm.response = reinterpret_cast<uint64_t>(&rr);
    rm.mr_handle = mr->handle;
    rm.flags = IBV_REREG_MR_CHANGE_ACCESS;
    rm.access_flags = static_cast<uint32_t>(access);
    Outcome("legacy_rereg_mr_access",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_REREG_MR, rm, sizeof(rr)));
    rm.flags = IBV_REREG_MR_CHANGE_TRANSLATION;
    rm.start = reinterpret_cast<uint64_t>(buf);
    rm.length = kBuf;
    rm.hca_va = rm.start;
    Outcome("legacy_rereg_mr_translation",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_REREG_MR, rm, sizeof(rr)));
    rm.mr_handle = 4245;
    rm.flags = IBV_REREG_MR_CHANGE_ACCESS;
    Outcome("legacy_rereg_mr_bad_handle",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_REREG_MR, rm, sizeof(rr)));
    ib_uverbs_dealloc_pd dp{};
    dp.pd_handle = pr.pd_handle;
    if (e == 0)
      Outcome("legacy_dealloc_pd", LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_DEALLOC_PD, dp, 0));
    // Error paths through write(): a handle that does not exist.
    dp.pd_handle = 4242;
    Outcome("legacy_dealloc_bad_handle",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_DEALLOC_PD, dp, 0));
    ib_uverbs_destroy_cq_resp dcr{};
    ib_uverbs_destroy_cq dc{};
    dc.response = reinterpret_cast<uint64_t>(&dcr);
    dc.cq_handle = 4243;
    Outcome("legacy_destroy_cq_bad_handle",
            LegacyWrite(ctx->cmd_fd, IB_USER_VERBS_CMD_DESTROY_CQ, dc, sizeof(dcr)));
  }

  // --- error paths through ioctl and the verbs API -------------------------------------
  const uint32_t driver_id = DriverIdOf(ctx->cmd_fd);
  Outcome("ioctl_destroy_pd_bad_handle",
          RawIoctl(ctx->cmd_fd, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, driver_id,
                   {[] {
                     ib_uverbs_attr a = Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, 4244);
                     return a;
                   }()}));
  Outcome("ioctl_destroy_cq_wrong_type",
          RawIoctl(ctx->cmd_fd, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, driver_id,
                   {Attr(UVERBS_ATTR_DESTROY_CQ_HANDLE, 0, pd->handle),
                    Attr(UVERBS_ATTR_DESTROY_CQ_RESP, sizeof(ib_uverbs_destroy_cq_resp),
                         reinterpret_cast<uint64_t>(buf + 16384))}));
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) Die("pipe", "pipe2");
  {
    uint32_t resp_cqe = 0;
    std::vector<ib_uverbs_attr> attrs = {
        Attr(UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0),
        Attr(UVERBS_ATTR_CREATE_CQ_CQE, 4, 16),
        Attr(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, 0),
        Attr(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, 0),
        Attr(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, reinterpret_cast<uint64_t>(&resp_cqe)),
        Attr(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 0, static_cast<uint64_t>(pipefd[0])),
    };
    Outcome("ioctl_cq_with_pipe_as_channel",
            RawIoctl(ctx->cmd_fd, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, driver_id, attrs));
  }
  {
    // UVERBS_METHOD_QUERY_PORT_SPEED, the DEVICE method after QUERY_GID_ENTRY on kernels newer
    // than 6.12 (rdma-core 62's ibv_query_port_speed): the port's effective speed where the
    // kernel has it, EPROTONOSUPPORT where it does not -- from the kernel either way, so the
    // proxy must forward it rather than answer for it.
    uint64_t speed = 0;
    const int err =
        RawIoctl(ctx->cmd_fd, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY + 1, driver_id,
                 {Attr(0 /* PORT_NUM, CONST_IN */, 8, 1),
                  Attr(1 /* RESP */, 8, reinterpret_cast<uint64_t>(&speed))});
    if (err == 0)
      Ok("ioctl_query_port_speed", "%llu", static_cast<unsigned long long>(speed));
    else
      Outcome("ioctl_query_port_speed", err);
  }
  {
    // The attribute array on a read-only page. The kernel writes a new object's id into the
    // app's array before it runs the method (uverbs_process_attr) and an output's
    // VALID_OUTPUT flag after (uverbs_copy_to -> uverbs_set_output): EFAULT either way, and a
    // create is undone. Under the proxy the kernel is given a copy of the array, so the proxy
    // must answer the same: before forwarding for a create, after it for a query.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* ro = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED) Die("read_only_attrs", "mmap");
    auto on_read_only = [&](const std::vector<unsigned char>& request) {
      if (mprotect(ro, page, PROT_READ | PROT_WRITE) != 0) Die("read_only_attrs", "mprotect");
      std::memcpy(ro, request.data(), request.size());
      if (mprotect(ro, page, PROT_READ) != 0) Die("read_only_attrs", "mprotect");
      return Ioctl(ctx->cmd_fd, ro);
    };
    // The kernel hands out the lowest free handle (xa_alloc on the file's idr): a handle freed
    // just before the refused create is taken back by the next create unless something kept
    // it, which shows that the refused create left no object behind, natively and proxied.
    ibv_cq* before = ibv_create_cq(ctx, 4, nullptr, nullptr, 0);
    if (before == nullptr) Die("read_only_attrs", "ibv_create_cq");
    const uint32_t freed = before->handle;
    if (ibv_destroy_cq(before) != 0) Die("read_only_attrs", "ibv_destroy_cq");
    uint32_t resp_cqe = 0;
    uint64_t uhw_out[8] = {};
    Outcome("ioctl_create_cq_read_only_attrs",
            on_read_only(Request(
                UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, driver_id,
                {Attr(UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0), Attr(UVERBS_ATTR_CREATE_CQ_CQE, 4, 16),
                 Attr(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, 0),
                 Attr(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, 0),
                 Attr(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, reinterpret_cast<uint64_t>(&resp_cqe)),
                 Attr(UVERBS_ATTR_UHW_OUT, sizeof(uhw_out),
                      reinterpret_cast<uint64_t>(uhw_out))})));
    ibv_cq* after = ibv_create_cq(ctx, 4, nullptr, nullptr, 0);
    if (after == nullptr) Die("read_only_attrs", "ibv_create_cq");
    Ok("read_only_create_left_nothing", "handle_reused=%d", after->handle == freed);
    if (ibv_destroy_cq(after) != 0) Die("read_only_attrs", "ibv_destroy_cq");
    ib_uverbs_alloc_pd_resp pd_resp{};
    Outcome("invoke_write_alloc_pd_read_only_attrs",
            on_read_only(Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver_id,
                                 {Attr(UVERBS_ATTR_WRITE_CMD, 8, IB_USER_VERBS_CMD_ALLOC_PD),
                                  Attr(UVERBS_ATTR_CORE_IN, 8, 0),
                                  Attr(UVERBS_ATTR_CORE_OUT, sizeof(pd_resp),
                                       reinterpret_cast<uint64_t>(&pd_resp))})));
    ib_uverbs_query_port_resp_ex port{};
    Outcome("ioctl_query_port_read_only_attrs",
            on_read_only(Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, driver_id,
                                 {Attr(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1),
                                  Attr(UVERBS_ATTR_QUERY_PORT_RESP, sizeof(port),
                                       reinterpret_cast<uint64_t>(&port))})));
    munmap(ro, page);
  }
  void* noaccess = mmap(nullptr, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ibv_mr* bad_mr = ibv_reg_mr(pd, noaccess, 65536, IBV_ACCESS_LOCAL_WRITE);
  Outcome("reg_mr_no_access", bad_mr != nullptr ? 0 : errno);
  if (bad_mr) ibv_dereg_mr(bad_mr);
  ibv_cq* bad_cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 9999);
  Outcome("create_cq_bad_vector", bad_cq != nullptr ? 0 : errno);
  if (bad_cq) ibv_destroy_cq(bad_cq);

  // --- verbs a device may lack: XRC domains, WQs, device memory, MR advice, CQ moderation,
  // importing a context. Each outcome is printed and compared: on rxe most are EOPNOTSUPP
  // (from the provider, or from the kernel, which disables what the driver lacks); on mlx5
  // they succeed and what they create is destroyed again.
  {
    ibv_xrcd_init_attr xa{};
    xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    xa.fd = -1;
    xa.oflags = O_CREAT;
    ibv_xrcd* xrcd = ibv_open_xrcd(ctx, &xa);
    Outcome("open_xrcd", xrcd != nullptr ? 0 : errno);
    if (xrcd != nullptr) Outcome("close_xrcd", ibv_close_xrcd(xrcd));

    ibv_wq_init_attr wa{};
    wa.wq_type = IBV_WQT_RQ;
    wa.max_wr = 16;
    wa.max_sge = 1;
    wa.pd = pd;
    wa.cq = cq;
    ibv_wq* wq = ibv_create_wq(ctx, &wa);
    Outcome("create_wq", wq != nullptr ? 0 : errno);
    if (wq != nullptr) Outcome("destroy_wq", ibv_destroy_wq(wq));

    ibv_alloc_dm_attr da{};
    da.length = 64;
    ibv_dm* dm = ibv_alloc_dm(ctx, &da);
    Outcome("alloc_dm", dm != nullptr ? 0 : errno);
    if (dm != nullptr) Outcome("free_dm", ibv_free_dm(dm));

    ibv_sge advice{reinterpret_cast<uint64_t>(buf), 4096, mr->lkey};
    Outcome("advise_mr", ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
                                       IBV_ADVISE_MR_FLAG_FLUSH, &advice, 1));

    ibv_modify_cq_attr ma{};
    ma.attr_mask = IBV_CQ_ATTR_MODERATE;
    ma.moderate.cq_count = 1;
    ma.moderate.cq_period = 0;
    Outcome("modify_cq", ibv_modify_cq(cq, &ma));

    // ibv_import_device: a second context on a copy of the command fd (QUERY_CONTEXT).
    const int copy = dup(ctx->cmd_fd);
    ibv_context* imported = copy >= 0 ? ibv_import_device(copy) : nullptr;
    Outcome("import_device", imported != nullptr ? 0 : errno);
    if (imported != nullptr) {
      ibv_pd* shared = ibv_import_pd(imported, pd->handle);
      Outcome("import_pd", shared != nullptr ? 0 : errno);
      if (shared != nullptr) ibv_unimport_pd(shared);
      Outcome("close_imported_device", ibv_close_device(imported));
    } else if (copy >= 0) {
      close(copy);
    }
  }

  // --- the legacy context path rdma-core falls back to -----------------------------------
  // On an EPROTONOSUPPORT from the GET_CONTEXT method, libibverbs opens contexts with the
  // legacy GET_CONTEXT wrapped in INVOKE_WRITE (cmd_get_context): the kernel creates the async
  // event fd there (ib_uverbs_get_context) and every CQ and QP rdma-core then creates names it
  // as EVENT_FD. On a second open of the device, so the program's own context is untouched.
  {
    const std::string path = std::string("/dev/infiniband/") + ctx->device->dev_name;
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) Die("invoke_write_get_context", "open");
    ib_uverbs_get_context_resp resp{};
    const int err = RawIoctl(
        fd, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver_id,
        {Attr(UVERBS_ATTR_WRITE_CMD, 8, IB_USER_VERBS_CMD_GET_CONTEXT),
         Attr(UVERBS_ATTR_CORE_IN, 8, 0),  // ib_uverbs_get_context: `response`, unused here
         Attr(UVERBS_ATTR_CORE_OUT, sizeof(resp), reinterpret_cast<uint64_t>(&resp))});
    Outcome("invoke_write_get_context", err);
    if (err == 0) {
      const int async_fd = static_cast<int>(resp.async_fd);
      Ok("invoke_write_get_context_fd", "open=%d", fcntl(async_fd, F_GETFD) >= 0);
      uint32_t resp_cqe = 0;
      uint64_t uhw_out[8] = {};  // the driver's response (rxe: the queue's mmap info)
      Outcome("create_cq_with_legacy_async_fd",
              RawIoctl(fd, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, driver_id,
                       {Attr(UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0),
                        Attr(UVERBS_ATTR_CREATE_CQ_CQE, 4, 16),
                        Attr(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, 0),
                        Attr(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, 0),
                        Attr(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4,
                             reinterpret_cast<uint64_t>(&resp_cqe)),
                        Attr(UVERBS_ATTR_CREATE_CQ_EVENT_FD, 0, static_cast<uint64_t>(async_fd)),
                        Attr(UVERBS_ATTR_UHW_OUT, sizeof(uhw_out),
                             reinterpret_cast<uint64_t>(uhw_out))}));
      close(async_fd);
    }
    close(fd);  // the context and its CQ go with the file
  }
  // An implicit ODP MR (start 0, the whole address space: ibv_reg_mr(pd, NULL, SIZE_MAX,
  // ON_DEMAND)) registers the address space of the process that issues it, so only the
  // program's own syscall may: the errno (rxe has no ODP) or the MR must be native's.
  {
    ibv_mr* odp = ibv_reg_mr(pd, nullptr, SIZE_MAX, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE);
    Outcome("reg_mr_implicit_odp", odp != nullptr ? 0 : errno);
    if (odp != nullptr) ibv_dereg_mr(odp);
  }

  // --- teardown (the kernel's order: children before parents) ---------------------------
  bool clean = true;
  auto chk = [&](int r) { clean &= r == 0; };
  chk(ibv_destroy_ah(ah));
  chk(ibv_destroy_qp(ud_a));
  chk(ibv_destroy_qp(ud_b));
  chk(ibv_destroy_qp(srq_qp));
  chk(ibv_destroy_qp(srq_peer));
  chk(ibv_destroy_srq(srq));
  chk(ibv_destroy_qp(rc.a));
  chk(ibv_destroy_qp(rc.b));
  // Destroying the PD while MRs still use it: EBUSY, as the kernel says.
  Outcome("dealloc_pd_in_use", ibv_dealloc_pd(pd) == 0 ? 0 : errno);
  if (mw1) chk(ibv_dealloc_mw(mw1));
  if (mw2) chk(ibv_dealloc_mw(mw2));
  chk(ibv_dereg_mr(mr));
  chk(ibv_dereg_mr(mr2));
  chk(ibv_destroy_cq(cq));
  chk(ibv_destroy_comp_channel(ch));
  chk(ibv_dealloc_pd(pd));
  chk(ibv_close_device(ctx));
  if (clean)
    Ok("teardown");
  else
    Fail("teardown", "a destroy failed");
  std::printf("%s\n", g_failures == 0 ? "verbs exercise passed" : "verbs exercise FAILED");
  return g_failures == 0 ? 0 : 1;
}
