// rxp_mlx5_verbs_workload: drives rdma-core's mlx5 provider through the control path of every
// verb whose bytes the ABI schema must decode -- device and port queries, PD, MR (register,
// re-register, import, on-demand + advice, dma-buf, device memory), MW, completion channel, CQ (plain, extended, resized, moderated), QPs
// (RC, UC, UD, raw packet, XRC initiator and target, DC initiator and target, extended send
// ops), modify to INIT / RTR / RTS, SRQs (basic, XRC), AH, multicast attach, WQ, RWQ
// indirection table and an RSS QP, flow steering (verbs flows with counters, mlx5dv matchers
// and flows), thread domains, mlx5dv queries, device import -- and
// destroys everything. On an InfiniBand port it addresses peers by LID, skips the Ethernet-only
// objects (raw packet, WQ, RSS) and adds an IPoIB-style underlay UD QP (source QPN). It posts no work: it exists to be captured under the fake mlx5 kernel
// (tests/tools/capture-mlx5-vectors.sh), not to move data.
//
//   rxp_mlx5_verbs_workload [DEVICE]     (default: the first device)
//
// Each step prints "ok" or "skip (reason)"; a step the provider refuses is reported, not
// fatal, unless later steps need what it creates. Exits 1 if the device cannot be opened.
//
// Test tooling only.
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

int g_failed_steps = 0;

void Report(const char* step, bool ok) {
  if (ok) {
    std::printf("%-40s ok\n", step);
  } else {
    ++g_failed_steps;
    std::printf("%-40s skip (%s)\n", step, std::strerror(errno));
  }
}

// Reports a pointer-returning verb.
template <typename T>
T* Step(const char* step, T* p) {
  Report(step, p != nullptr);
  return p;
}

// Reports an int-returning verb (0 = success; ibv_* return an errno value or -1 + errno).
bool StepRc(const char* step, int rc) {
  if (rc > 0) errno = rc;
  Report(step, rc == 0);
  return rc == 0;
}

constexpr size_t kBuf = 1 << 16;

struct Cqs {
  ibv_cq* send = nullptr;
  ibv_cq* recv = nullptr;
};

// ibv_qp_init_attr_ex for a QP of `type` on `pd`, both queues on `cq`: `wr` WRs of one SGE
// each way (0: no receive queue).
ibv_qp_init_attr_ex QpAttrEx(ibv_qp_type type, ibv_pd* pd, ibv_cq* cq, uint32_t send_wr,
                             uint32_t recv_wr) {
  ibv_qp_init_attr_ex a{};
  a.qp_type = type;
  a.send_cq = cq;
  a.recv_cq = recv_wr != 0 ? cq : nullptr;
  a.pd = pd;
  a.comp_mask = IBV_QP_INIT_ATTR_PD;
  a.cap.max_send_wr = send_wr;
  a.cap.max_send_sge = send_wr != 0 ? 1 : 0;
  a.cap.max_recv_wr = recv_wr;
  a.cap.max_recv_sge = recv_wr != 0 ? 1 : 0;
  return a;
}

ibv_qp* CreateQp(const char* step, ibv_pd* pd, const Cqs& cqs, ibv_qp_type type,
                 ibv_srq* srq = nullptr) {
  ibv_qp_init_attr a{};
  a.send_cq = cqs.send;
  a.recv_cq = cqs.recv;
  a.srq = srq;
  a.qp_type = type;
  a.cap.max_send_wr = 16;
  a.cap.max_recv_wr = srq != nullptr ? 0 : 32;
  a.cap.max_send_sge = 2;
  a.cap.max_recv_sge = srq != nullptr ? 0 : 1;
  a.cap.max_inline_data = 64;
  return Step(step, ibv_create_qp(pd, &a));
}

// How this port addresses a peer: by GID (RoCE: a GRH is mandatory) or by LID (InfiniBand).
struct Path {
  bool ib = false;
  uint16_t lid = 0;
  ibv_gid gid{};
  uint8_t sgid_index = 0;

  void Fill(ibv_ah_attr& ah) const {
    ah.port_num = 1;
    if (ib) {
      ah.dlid = lid;
      return;
    }
    ah.is_global = 1;
    ah.grh.dgid = gid;
    ah.grh.sgid_index = sgid_index;
    ah.grh.hop_limit = 64;
  }
};

// RESET -> INIT -> RTR -> RTS for a connected QP, looping back to itself (the fake kernel
// checks the transitions, not the path).
void ConnectRc(const char* what, ibv_qp* qp, const Path& path, bool uc = false) {
  char step[64];
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  std::snprintf(step, sizeof(step), "ibv_modify_qp(%s, INIT)", what);
  if (!StepRc(step, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                                IBV_QP_ACCESS_FLAGS)))
    return;
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = qp->qp_num;
  a.rq_psn = 0x1234;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  path.Fill(a.ah_attr);
  std::snprintf(step, sizeof(step), "ibv_modify_qp(%s, RTR)", what);
  // UC has no RDMA reads and no RNR NAKs: those attributes are RC's only (IB spec QP table).
  const int rc_rtr = uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (!StepRc(step, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                                IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | rc_rtr)))
    return;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = 0x1234;
  a.max_rd_atomic = 4;
  std::snprintf(step, sizeof(step), "ibv_modify_qp(%s, RTS)", what);
  const int rc_rts =
      uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  StepRc(step, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | rc_rts));
}

void ConnectUd(ibv_qp* qp) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = 0x11111111;
  if (!StepRc("ibv_modify_qp(UD, INIT)",
              ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)))
    return;
  a = {};
  a.qp_state = IBV_QPS_RTR;
  if (!StepRc("ibv_modify_qp(UD, RTR)", ibv_modify_qp(qp, &a, IBV_QP_STATE))) return;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0x42;
  StepRc("ibv_modify_qp(UD, RTS)", ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
}

void Destroy(const char* step, int rc) { StepRc(step, rc); }

}  // namespace

int main(int argc, char** argv) {
  int num = 0;
  ibv_device** list = ibv_get_device_list(&num);
  if (list == nullptr || num == 0) {
    std::fprintf(stderr, "no RDMA device\n");
    return 1;
  }
  ibv_device* dev = list[0];
  for (int i = 0; argc > 1 && i < num; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), argv[1]) == 0) dev = list[i];
  std::printf("device %s (mlx5dv: %s)\n", ibv_get_device_name(dev),
              mlx5dv_is_supported(dev) ? "yes" : "no");
  ibv_context* ctx = Step("ibv_open_device", ibv_open_device(dev));
  if (ctx == nullptr) return 1;

  // --- device, port, GIDs -------------------------------------------------------------------
  ibv_device_attr dattr{};
  StepRc("ibv_query_device", ibv_query_device(ctx, &dattr));
  ibv_device_attr_ex dattr_ex{};
  StepRc("ibv_query_device_ex", ibv_query_device_ex(ctx, nullptr, &dattr_ex));
  ibv_port_attr pattr{};
  StepRc("ibv_query_port", ibv_query_port(ctx, 1, &pattr));
  // RoCE: GID 3 is the RoCE v2 one of the fake device's IPv4 address; IB: GID 0, LIDs.
  Path path;
  path.ib = pattr.link_layer == IBV_LINK_LAYER_INFINIBAND;
  path.lid = pattr.lid;
  path.sgid_index = path.ib ? 0 : 3;
  std::printf("link layer: %s\n", path.ib ? "InfiniBand" : "Ethernet");
  StepRc("ibv_query_gid", ibv_query_gid(ctx, 1, path.sgid_index, &path.gid));
  ibv_gid_entry gentry{};
  StepRc("ibv_query_gid_ex", ibv_query_gid_ex(ctx, 1, path.sgid_index, &gentry, 0));
  ibv_gid_entry table[16]{};
  const ssize_t ngids = ibv_query_gid_table(ctx, table, 16, 0);
  if (ngids < 0) errno = static_cast<int>(-ngids);
  Report("ibv_query_gid_table", ngids >= 0);
  uint16_t pkey = 0;
  StepRc("ibv_query_pkey", ibv_query_pkey(ctx, 1, 0, &pkey));
  mlx5dv_context dvctx{};
  dvctx.comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_STRIDING_RQ |
                    MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS | MLX5DV_CONTEXT_MASK_DYN_BFREGS |
                    MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE | MLX5DV_CONTEXT_MASK_DC_ODP_CAPS;
  StepRc("mlx5dv_query_device", mlx5dv_query_device(ctx, &dvctx));
  mlx5dv_port dvport{};
  StepRc("mlx5dv_query_port", mlx5dv_query_port(ctx, 1, &dvport));
  ibv_values_ex values{};
  values.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
  StepRc("ibv_query_rt_values_ex", ibv_query_rt_values_ex(ctx, &values));

  // --- PD, MR, MW ---------------------------------------------------------------------------
  ibv_pd* pd = Step("ibv_alloc_pd", ibv_alloc_pd(ctx));
  if (pd == nullptr) return 1;
  mlx5dv_pd dvpd{};
  mlx5dv_obj obj{};
  obj.pd.in = pd;
  obj.pd.out = &dvpd;
  StepRc("mlx5dv_init_obj(PD)", mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD));
  ibv_pd* ipd = Step("ibv_import_pd", ibv_import_pd(ctx, pd->handle));
  if (ipd != nullptr) ibv_unimport_pd(ipd);

  std::vector<char> buf(2 * kBuf);
  std::vector<char> buf2(kBuf);
  ibv_mr* mr = Step("ibv_reg_mr", ibv_reg_mr(pd, buf.data(), kBuf,
                                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND));
  if (mr != nullptr) {
    StepRc("ibv_rereg_mr(access)",
           ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND));
    StepRc("ibv_rereg_mr(translation)",
           ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, buf.data() + kBuf, kBuf,
                        0));
    ibv_mr* imr = Step("ibv_import_mr", ibv_import_mr(pd, mr->handle));
    if (imr != nullptr) ibv_unimport_mr(imr);
  }
  ibv_mr* mr2 = Step("ibv_reg_mr(relaxed ordering)",
                     ibv_reg_mr(pd, buf2.data(), kBuf,
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING));
  ibv_mw* mw1 = Step("ibv_alloc_mw(type 1)", ibv_alloc_mw(pd, IBV_MW_TYPE_1));
  ibv_mw* mw2 = Step("ibv_alloc_mw(type 2)", ibv_alloc_mw(pd, IBV_MW_TYPE_2));

  // On-demand paging: an ODP MR, prefetched with ibv_advise_mr.
  std::vector<char> odp_buf(kBuf);
  ibv_mr* odp = Step("ibv_reg_mr(on demand)",
                     ibv_reg_mr(pd, odp_buf.data(), kBuf,
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
  if (odp != nullptr) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(odp_buf.data()), 4096, odp->lkey};
    StepRc("ibv_advise_mr(prefetch write)",
           ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
                         &sge, 1));
  }
  // A dma-buf MR (the fake kernel takes any fd for the dma-buf; a memfd here).
  const int dmabuf_fd = memfd_create("rxp-dmabuf", MFD_CLOEXEC);
  ibv_mr* dmabuf_mr = nullptr;
  if (dmabuf_fd >= 0 && ftruncate(dmabuf_fd, kBuf) == 0)
    dmabuf_mr = Step("ibv_reg_dmabuf_mr", ibv_reg_dmabuf_mr(pd, 0, kBuf, 0, dmabuf_fd,
                                                            IBV_ACCESS_LOCAL_WRITE));
  // Device memory (mlx5 MEMIC): allocate, copy in, register, import.
  ibv_alloc_dm_attr dma{};
  dma.length = 4096;
  dma.log_align_req = 6;
  ibv_dm* dm = Step("ibv_alloc_dm", ibv_alloc_dm(ctx, &dma));
  ibv_mr* dm_mr = nullptr;
  if (dm != nullptr) {
    const char hello[64] = "rdmaproxy";
    StepRc("ibv_memcpy_to_dm", ibv_memcpy_to_dm(dm, 0, hello, sizeof(hello)));
    dm_mr = Step("ibv_reg_dm_mr",
                 ibv_reg_dm_mr(pd, dm, 0, 4096,
                               IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
                                   IBV_ACCESS_REMOTE_READ));
    Step("mlx5dv_dm_map_op_addr", mlx5dv_dm_map_op_addr(dm, 0));
    ibv_dm* idm = Step("ibv_import_dm", ibv_import_dm(ctx, dm->handle));
    if (idm != nullptr) ibv_unimport_dm(idm);
  }
  // mlx5dv objects of the device: a virtio doorbell page, a packet pacing index (a DEVX-only
  // object: refused here), a steering anchor.
  mlx5dv_var* var = Step("mlx5dv_alloc_var", mlx5dv_alloc_var(ctx, 0));
  if (var != nullptr) mlx5dv_free_var(var);
  uint8_t pp_ctx[0x30] = {};
  pp_ctx[3] = 100;  // rate_limit (Mb/s), big endian
  mlx5dv_pp* pp = Step("mlx5dv_pp_alloc", mlx5dv_pp_alloc(ctx, sizeof(pp_ctx), pp_ctx, 0));
  if (pp != nullptr) mlx5dv_pp_free(pp);
  mlx5dv_steering_anchor_attr saa{};
  saa.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
  saa.priority = 1;
  mlx5dv_steering_anchor* anchor =
      Step("mlx5dv_create_steering_anchor", mlx5dv_create_steering_anchor(ctx, &saa));
  if (anchor != nullptr)
    Destroy("mlx5dv_destroy_steering_anchor", mlx5dv_destroy_steering_anchor(anchor));

  // --- completion channel, CQs --------------------------------------------------------------
  ibv_comp_channel* channel = Step("ibv_create_comp_channel", ibv_create_comp_channel(ctx));
  ibv_cq* cq = Step("ibv_create_cq", ibv_create_cq(ctx, 64, nullptr, channel, 0));
  if (cq == nullptr) return 1;
  StepRc("ibv_req_notify_cq", ibv_req_notify_cq(cq, 0));
  StepRc("ibv_resize_cq", ibv_resize_cq(cq, 256));
  ibv_cq_init_attr_ex cqa{};
  cqa.cqe = 128;
  cqa.comp_vector = 1;
  cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  cqa.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
  ibv_cq_ex* cqex = Step("ibv_create_cq_ex", ibv_create_cq_ex(ctx, &cqa));
  mlx5dv_cq_init_attr dvcqa{};
  dvcqa.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
  dvcqa.cqe_size = 128;
  ibv_cq_init_attr_ex cqa2{};
  cqa2.cqe = 32;
  cqa2.wc_flags = IBV_WC_STANDARD_FLAGS;
  ibv_cq_ex* dvcq = Step("mlx5dv_create_cq(cqe_size 128)", mlx5dv_create_cq(ctx, &cqa2, &dvcqa));
  // CQE compression (mini CQEs carrying the RSS hash).
  mlx5dv_cq_init_attr zcqa{};
  zcqa.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
  zcqa.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH;
  ibv_cq_ex* zcq = Step("mlx5dv_create_cq(compressed)", mlx5dv_create_cq(ctx, &cqa2, &zcqa));
  if (cqex != nullptr) {
    ibv_modify_cq_attr mod{};
    mod.attr_mask = IBV_CQ_ATTR_MODERATE;
    mod.moderate.cq_count = 16;
    mod.moderate.cq_period = 8;
    StepRc("ibv_modify_cq(moderate)", ibv_modify_cq(ibv_cq_ex_to_cq(cqex), &mod));
  }
  mlx5dv_cq dvcq_out{};
  obj = {};
  obj.cq.in = cq;
  obj.cq.out = &dvcq_out;
  StepRc("mlx5dv_init_obj(CQ)", mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
  const Cqs cqs{cq, cq};

  // --- SRQs -----------------------------------------------------------------------------------
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 64;
  sa.attr.max_sge = 2;
  ibv_srq* srq = Step("ibv_create_srq", ibv_create_srq(pd, &sa));
  if (srq != nullptr) {
    ibv_srq_attr sattr{};
    sattr.srq_limit = 8;
    StepRc("ibv_modify_srq(limit)", ibv_modify_srq(srq, &sattr, IBV_SRQ_LIMIT));
    StepRc("ibv_query_srq", ibv_query_srq(srq, &sattr));
  }

  // --- QPs ------------------------------------------------------------------------------------
  ibv_qp* rc = CreateQp("ibv_create_qp(RC)", pd, cqs, IBV_QPT_RC);
  if (rc != nullptr) {
    ConnectRc("RC", rc, path);
    ibv_qp_attr qa{};
    ibv_qp_init_attr qia{};
    StepRc("ibv_query_qp", ibv_query_qp(rc, &qa, IBV_QP_STATE | IBV_QP_CAP, &qia));
    mlx5dv_qp dvqp{};
    obj = {};
    obj.qp.in = rc;
    obj.qp.out = &dvqp;
    StepRc("mlx5dv_init_obj(QP)", mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
  }
  ibv_qp* uc = CreateQp("ibv_create_qp(UC)", pd, cqs, IBV_QPT_UC);
  if (uc != nullptr) ConnectRc("UC", uc, path, true);
  ibv_qp* ud = CreateQp("ibv_create_qp(UD)", pd, cqs, IBV_QPT_UD);
  if (ud != nullptr) ConnectUd(ud);
  ibv_qp* rc_srq = srq != nullptr ? CreateQp("ibv_create_qp(RC, SRQ)", pd, cqs, IBV_QPT_RC, srq)
                                  : nullptr;

  // ibv_create_qp_ex with the new post-send API and ECE.
  ibv_qp_init_attr_ex qx = QpAttrEx(IBV_QPT_RC, pd, cq, 32, 32);
  qx.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qx.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
                      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_LOCAL_INV |
                      IBV_QP_EX_WITH_BIND_MW;
  ibv_qp* rcx = Step("ibv_create_qp_ex(RC, send ops)", ibv_create_qp_ex(ctx, &qx));
  if (rcx != nullptr) {
    ibv_ece ece{};
    if (ibv_query_ece(rcx, &ece) == 0) {
      StepRc("ibv_set_ece", ibv_set_ece(rcx, &ece));
    } else {
      Report("ibv_query_ece", false);
    }
    ConnectRc("RC ex", rcx, path);
  }
  // Scatter-to-CQE and signature flags through mlx5dv_create_qp.
  mlx5dv_qp_init_attr dvqa{};
  dvqa.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
  dvqa.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
  qx.comp_mask = IBV_QP_INIT_ATTR_PD;
  ibv_qp* rcdv = Step("mlx5dv_create_qp(RC, no scatter2cqe)", mlx5dv_create_qp(ctx, &qx, &dvqa));

  // Thread domain: a dedicated UAR for the QP.
  ibv_td_init_attr tda{};
  ibv_td* td = Step("ibv_alloc_td", ibv_alloc_td(ctx, &tda));
  ibv_pd* parent = nullptr;
  ibv_qp* rctd = nullptr;
  if (td != nullptr) {
    ibv_parent_domain_init_attr pda{};
    pda.pd = pd;
    pda.td = td;
    parent = Step("ibv_alloc_parent_domain", ibv_alloc_parent_domain(ctx, &pda));
    if (parent != nullptr) {
      qx.pd = parent;
      qx.comp_mask = IBV_QP_INIT_ATTR_PD;
      rctd = Step("ibv_create_qp_ex(RC, thread domain)", ibv_create_qp_ex(ctx, &qx));
      qx.pd = pd;
    }
  }

  // DC: an initiator and a target (on the SRQ).
  ibv_qp* dci = nullptr;
  ibv_qp* dci_streams = nullptr;
  ibv_qp* dct = nullptr;
  {
    ibv_qp_init_attr_ex dx = QpAttrEx(IBV_QPT_DRIVER, pd, cq, 16, 0);
    dx.recv_cq = cq;
    mlx5dv_qp_init_attr da{};
    da.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
    da.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
    dci = Step("mlx5dv_create_qp(DCI)", mlx5dv_create_qp(ctx, &dx, &da));
    // A DCI with streams (mlx5_ib_create_qp.dci_streams).
    mlx5dv_qp_init_attr ds = da;
    ds.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
    ds.dc_init_attr.dci_streams.log_num_concurent = 2;
    ds.dc_init_attr.dci_streams.log_num_errored = 1;
    dci_streams = Step("mlx5dv_create_qp(DCI, streams)", mlx5dv_create_qp(ctx, &dx, &ds));
    if (srq != nullptr) {
      dx.cap = {};
      dx.srq = srq;
      da.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
      da.dc_init_attr.dct_access_key = 0x1ee7a11;
      dct = Step("mlx5dv_create_qp(DCT)", mlx5dv_create_qp(ctx, &dx, &da));
      if (dct != nullptr) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = 1;
        a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        if (StepRc("ibv_modify_qp(DCT, INIT)",
                   ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                              IBV_QP_ACCESS_FLAGS))) {
          a = {};
          a.qp_state = IBV_QPS_RTR;
          a.path_mtu = IBV_MTU_1024;
          a.min_rnr_timer = 12;
          path.Fill(a.ah_attr);
          StepRc("ibv_modify_qp(DCT, RTR)",
                 ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
                                            IBV_QP_PATH_MTU));
        }
      }
    }
  }

  // XRC: a domain, an XRC SRQ, an initiator QP and a target QP.
  ibv_xrcd* xrcd = nullptr;
  ibv_srq* xsrq = nullptr;
  ibv_qp* xini = nullptr;
  ibv_qp* xtgt = nullptr;
  {
    ibv_xrcd_init_attr xa{};
    xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    xa.fd = -1;
    xa.oflags = O_CREAT;
    xrcd = Step("ibv_open_xrcd", ibv_open_xrcd(ctx, &xa));
    if (xrcd != nullptr) {
      ibv_srq_init_attr_ex xs{};
      xs.attr.max_wr = 32;
      xs.attr.max_sge = 1;
      xs.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
                     IBV_SRQ_INIT_ATTR_PD;
      xs.srq_type = IBV_SRQT_XRC;
      xs.xrcd = xrcd;
      xs.cq = cq;
      xs.pd = pd;
      xsrq = Step("ibv_create_srq_ex(XRC)", ibv_create_srq_ex(ctx, &xs));
      ibv_qp_init_attr_ex xq = QpAttrEx(IBV_QPT_XRC_SEND, pd, cq, 8, 0);
      xini = Step("ibv_create_qp_ex(XRC_SEND)", ibv_create_qp_ex(ctx, &xq));
      xq = {};
      xq.qp_type = IBV_QPT_XRC_RECV;
      xq.xrcd = xrcd;
      xq.comp_mask = IBV_QP_INIT_ATTR_XRCD;
      xtgt = Step("ibv_create_qp_ex(XRC_RECV)", ibv_create_qp_ex(ctx, &xq));
    }
  }

  // Raw packet QP, WQ, RWQ indirection table, RSS QP: Ethernet only.
  ibv_qp* raw = nullptr;
  ibv_wq* wq = nullptr;
  ibv_wq* swq = nullptr;
  ibv_rwq_ind_table* ind = nullptr;
  ibv_qp* rss = nullptr;
  if (!path.ib) {
    raw = CreateQp("ibv_create_qp(RAW_PACKET)", pd, cqs, IBV_QPT_RAW_PACKET);
    if (raw != nullptr) {
      // INIT (with the port) -> RTR -> RTS, then pace it: a rate limit with burst bounds.
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_INIT;
      a.port_num = 1;
      bool up = StepRc("ibv_modify_qp(RAW_PACKET, INIT)",
                       ibv_modify_qp(raw, &a, IBV_QP_STATE | IBV_QP_PORT));
      a = {};
      a.qp_state = IBV_QPS_RTR;
      up = up && StepRc("ibv_modify_qp(RAW_PACKET, RTR)", ibv_modify_qp(raw, &a, IBV_QP_STATE));
      a.qp_state = IBV_QPS_RTS;
      up = up && StepRc("ibv_modify_qp(RAW_PACKET, RTS)", ibv_modify_qp(raw, &a, IBV_QP_STATE));
      if (up) {
        ibv_qp_rate_limit_attr rl{};
        rl.rate_limit = 100000;  // kbps
        rl.max_burst_sz = 4096;
        rl.typical_pkt_sz = 1500;
        StepRc("ibv_modify_qp_rate_limit(burst)", ibv_modify_qp_rate_limit(raw, &rl));
      }
    }
    ibv_wq_init_attr wa{};
    wa.wq_type = IBV_WQT_RQ;
    wa.max_wr = 64;
    wa.max_sge = 1;
    wa.pd = pd;
    wa.cq = cq;
    wq = Step("ibv_create_wq", ibv_create_wq(ctx, &wa));
    // A striding (multi-packet) receive queue: 512 strides of 64 bytes per WQE.
    mlx5dv_wq_init_attr swa{};
    swa.comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ;
    swa.striding_rq_attrs.single_stride_log_num_of_bytes = 6;
    swa.striding_rq_attrs.single_wqe_log_num_of_strides = 9;
    swa.striding_rq_attrs.two_byte_shift_en = 0;
    swq = Step("mlx5dv_create_wq(striding)", mlx5dv_create_wq(ctx, &wa, &swa));
    if (wq != nullptr) {
      ibv_wq_attr wm{};
      wm.attr_mask = IBV_WQ_ATTR_STATE;
      wm.wq_state = IBV_WQS_RDY;
      StepRc("ibv_modify_wq(RDY)", ibv_modify_wq(wq, &wm));
      ibv_rwq_ind_table_init_attr ia{};
      ia.log_ind_tbl_size = 0;
      ia.ind_tbl = &wq;
      ind = Step("ibv_create_rwq_ind_table", ibv_create_rwq_ind_table(ctx, &ia));
      if (ind != nullptr) {
        static uint8_t key[40] = {0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2,
                                  0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9,
                                  0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
                                  0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a};
        ibv_qp_init_attr_ex rq{};
        rq.qp_type = IBV_QPT_RAW_PACKET;
        rq.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
                       IBV_QP_INIT_ATTR_RX_HASH;
        rq.pd = pd;
        rq.rwq_ind_tbl = ind;
        rq.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
        rq.rx_hash_conf.rx_hash_key_len = sizeof(key);
        rq.rx_hash_conf.rx_hash_key = key;
        rq.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
                                              IBV_RX_HASH_SRC_PORT_TCP |
                                              IBV_RX_HASH_DST_PORT_TCP;
        rss = Step("ibv_create_qp_ex(RSS)", ibv_create_qp_ex(ctx, &rq));
      }
    }
  }

  // Steering to the raw packet QP: a verbs flow counted by a counters object, and an mlx5dv
  // matcher + flow.
  ibv_counters* counters = nullptr;
  ibv_flow* flow = nullptr;
  mlx5dv_flow_matcher* matcher = nullptr;
  ibv_flow* dvflow = nullptr;
  ibv_flow_action* modify = nullptr;
  ibv_flow_action* decap = nullptr;
  if (raw != nullptr) {
    ibv_counters_init_attr ca{};
    counters = Step("ibv_create_counters", ibv_create_counters(ctx, &ca));
    if (counters != nullptr) {
      ibv_counter_attach_attr at{};
      at.counter_desc = IBV_COUNTER_PACKETS;
      at.index = 0;
      StepRc("ibv_attach_counters_point_flow(packets)",
             ibv_attach_counters_point_flow(counters, &at, nullptr));
      at.counter_desc = IBV_COUNTER_BYTES;
      at.index = 1;
      StepRc("ibv_attach_counters_point_flow(bytes)",
             ibv_attach_counters_point_flow(counters, &at, nullptr));
    }
    // ibv_flow_attr followed by its specs, back to back (verbs.h: the specs follow the attr).
    ibv_flow_attr attr{};
    attr.type = IBV_FLOW_ATTR_NORMAL;
    attr.num_of_specs = counters != nullptr ? 2 : 1;
    attr.port = 1;
    ibv_flow_spec_eth eth{};
    eth.type = IBV_FLOW_SPEC_ETH;
    eth.size = sizeof(eth);
    const uint8_t mac[6] = {0x0c, 0x42, 0xa1, 0xf5, 0x3a, 0x10};
    std::memcpy(eth.val.dst_mac, mac, sizeof(mac));
    std::memset(eth.mask.dst_mac, 0xff, sizeof(mac));
    ibv_flow_spec_counter_action count{};
    count.type = IBV_FLOW_SPEC_ACTION_COUNT;
    count.size = sizeof(count);
    count.counters = counters;
    attr.size = static_cast<uint16_t>(sizeof(attr) + sizeof(eth) + sizeof(count));
    std::vector<uint64_t> fbuf((size_t{attr.size} + 7) / 8);
    auto* fb = reinterpret_cast<char*>(fbuf.data());
    std::memcpy(fb, &attr, sizeof(attr));
    std::memcpy(fb + sizeof(attr), &eth, sizeof(eth));
    std::memcpy(fb + sizeof(attr) + sizeof(eth), &count, sizeof(count));
    flow = Step("ibv_create_flow(eth, count)",
                ibv_create_flow(raw, reinterpret_cast<ibv_flow_attr*>(fb)));
    if (flow != nullptr && counters != nullptr) {
      uint64_t counts[2] = {};
      StepRc("ibv_read_counters", ibv_read_counters(counters, counts, 2, 0));
    }
    // mlx5dv steering: outer destination MAC (fte_match_param.outer_headers.dmac_47_16).
    constexpr size_t kMatch = 64;
    auto mask = std::unique_ptr<mlx5dv_flow_match_parameters, decltype(&std::free)>(
        static_cast<mlx5dv_flow_match_parameters*>(
            std::calloc(1, sizeof(mlx5dv_flow_match_parameters) + kMatch)),
        &std::free);
    auto value = std::unique_ptr<mlx5dv_flow_match_parameters, decltype(&std::free)>(
        static_cast<mlx5dv_flow_match_parameters*>(
            std::calloc(1, sizeof(mlx5dv_flow_match_parameters) + kMatch)),
        &std::free);
    mask->match_sz = kMatch;
    value->match_sz = kMatch;
    std::memset(reinterpret_cast<uint8_t*>(mask->match_buf) + 8, 0xff, 6);
    std::memcpy(reinterpret_cast<uint8_t*>(value->match_buf) + 8, mac, sizeof(mac));
    // Flow actions: rewrite a header field (one 8-byte PRM set action), decapsulate L2.
    uint64_t set_action[1] = {__builtin_bswap64(0x1001000000000000ull)};
    modify = Step("mlx5dv_create_flow_action_modify_header",
                  mlx5dv_create_flow_action_modify_header(ctx, sizeof(set_action), set_action,
                                                          MLX5DV_FLOW_TABLE_TYPE_NIC_RX));
    decap = Step("mlx5dv_create_flow_action_packet_reformat(decap)",
                 mlx5dv_create_flow_action_packet_reformat(
                     ctx, 0, nullptr, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
                     MLX5DV_FLOW_TABLE_TYPE_NIC_RX));
    mlx5dv_flow_matcher_attr ma{};
    ma.type = IBV_FLOW_ATTR_NORMAL;
    ma.priority = 3;
    ma.match_criteria_enable = 1;  // outer headers
    ma.match_mask = mask.get();
    ma.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE;
    ma.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
    matcher = Step("mlx5dv_create_flow_matcher", mlx5dv_create_flow_matcher(ctx, &ma));
    if (matcher != nullptr) {
      mlx5dv_flow_action_attr act[4]{};
      size_t nact = 0;
      act[nact].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
      act[nact++].qp = raw;
      act[nact].type = MLX5DV_FLOW_ACTION_TAG;
      act[nact++].tag_value = 0x42;
      for (ibv_flow_action* a : {modify, decap}) {
        if (a == nullptr) continue;
        act[nact].type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION;
        act[nact++].action = a;
      }
      dvflow = Step("mlx5dv_create_flow(dest QP, tag, actions)",
                    mlx5dv_create_flow(matcher, value.get(), nact, act));
    }
  }

  // An IPoIB-style underlay UD QP (IB only): the kernel treats it like a raw packet QP and pins
  // its separate send queue buffer (mlx5 create_raw_packet_qp).
  ibv_qp* underlay = nullptr;
  if (path.ib && ud != nullptr) {
    ibv_qp_init_attr_ex uq = QpAttrEx(IBV_QPT_UD, pd, cq, 16, 16);
    uq.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
    uq.create_flags = IBV_QP_CREATE_SOURCE_QPN;
    uq.source_qpn = ud->qp_num;
    underlay = Step("ibv_create_qp_ex(UD, source QPN)", ibv_create_qp_ex(ctx, &uq));
    if (underlay != nullptr) {
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_INIT;
      if (StepRc("ibv_modify_qp(underlay, INIT)", ibv_modify_qp(underlay, &a, IBV_QP_STATE))) {
        a.qp_state = IBV_QPS_RTR;
        if (StepRc("ibv_modify_qp(underlay, RTR)", ibv_modify_qp(underlay, &a, IBV_QP_STATE))) {
          a.qp_state = IBV_QPS_RTS;
          StepRc("ibv_modify_qp(underlay, RTS)", ibv_modify_qp(underlay, &a, IBV_QP_STATE));
        }
      }
    }
  }

  // --- AH, multicast --------------------------------------------------------------------------
  ibv_ah_attr aha{};
  path.Fill(aha);
  ibv_ah* ah = Step("ibv_create_ah", ibv_create_ah(pd, &aha));
  if (ud != nullptr) {
    ibv_gid mgid{};
    mgid.raw[0] = 0xff;
    mgid.raw[1] = 0x0e;
    mgid.raw[15] = 0x01;
    if (StepRc("ibv_attach_mcast", ibv_attach_mcast(ud, &mgid, 0)))
      StepRc("ibv_detach_mcast", ibv_detach_mcast(ud, &mgid, 0));
  }

  // --- a second context on the same file: ibv_import_device ----------------------------------
  const int fd2 = dup(ctx->cmd_fd);
  ibv_context* imported = fd2 >= 0 ? Step("ibv_import_device", ibv_import_device(fd2)) : nullptr;
  if (imported != nullptr) Destroy("ibv_close_device(imported)", ibv_close_device(imported));

  // --- teardown -------------------------------------------------------------------------------
  if (dvflow != nullptr) Destroy("ibv_destroy_flow(mlx5dv)", ibv_destroy_flow(dvflow));
  if (matcher != nullptr)
    Destroy("mlx5dv_destroy_flow_matcher", mlx5dv_destroy_flow_matcher(matcher));
  if (decap != nullptr) Destroy("ibv_destroy_flow_action(decap)", ibv_destroy_flow_action(decap));
  if (modify != nullptr)
    Destroy("ibv_destroy_flow_action(modify)", ibv_destroy_flow_action(modify));
  if (flow != nullptr) Destroy("ibv_destroy_flow", ibv_destroy_flow(flow));
  if (counters != nullptr) Destroy("ibv_destroy_counters", ibv_destroy_counters(counters));
  if (ah != nullptr) Destroy("ibv_destroy_ah", ibv_destroy_ah(ah));
  if (underlay != nullptr) Destroy("ibv_destroy_qp(underlay)", ibv_destroy_qp(underlay));
  if (rss != nullptr) Destroy("ibv_destroy_qp(RSS)", ibv_destroy_qp(rss));
  if (ind != nullptr) Destroy("ibv_destroy_rwq_ind_table", ibv_destroy_rwq_ind_table(ind));
  if (swq != nullptr) Destroy("ibv_destroy_wq(striding)", ibv_destroy_wq(swq));
  if (wq != nullptr) Destroy("ibv_destroy_wq", ibv_destroy_wq(wq));
  if (raw != nullptr) Destroy("ibv_destroy_qp(RAW_PACKET)", ibv_destroy_qp(raw));
  if (xtgt != nullptr) Destroy("ibv_destroy_qp(XRC_RECV)", ibv_destroy_qp(xtgt));
  if (xini != nullptr) Destroy("ibv_destroy_qp(XRC_SEND)", ibv_destroy_qp(xini));
  if (xsrq != nullptr) Destroy("ibv_destroy_srq(XRC)", ibv_destroy_srq(xsrq));
  if (xrcd != nullptr) Destroy("ibv_close_xrcd", ibv_close_xrcd(xrcd));
  if (dct != nullptr) Destroy("ibv_destroy_qp(DCT)", ibv_destroy_qp(dct));
  if (dci_streams != nullptr)
    Destroy("ibv_destroy_qp(DCI, streams)", ibv_destroy_qp(dci_streams));
  if (dci != nullptr) Destroy("ibv_destroy_qp(DCI)", ibv_destroy_qp(dci));
  if (rctd != nullptr) Destroy("ibv_destroy_qp(thread domain)", ibv_destroy_qp(rctd));
  if (parent != nullptr) Destroy("ibv_dealloc_pd(parent domain)", ibv_dealloc_pd(parent));
  if (td != nullptr) Destroy("ibv_dealloc_td", ibv_dealloc_td(td));
  if (rcdv != nullptr) Destroy("ibv_destroy_qp(mlx5dv RC)", ibv_destroy_qp(rcdv));
  if (rcx != nullptr) Destroy("ibv_destroy_qp(RC ex)", ibv_destroy_qp(rcx));
  if (rc_srq != nullptr) Destroy("ibv_destroy_qp(RC, SRQ)", ibv_destroy_qp(rc_srq));
  if (ud != nullptr) Destroy("ibv_destroy_qp(UD)", ibv_destroy_qp(ud));
  if (uc != nullptr) Destroy("ibv_destroy_qp(UC)", ibv_destroy_qp(uc));
  if (rc != nullptr) Destroy("ibv_destroy_qp(RC)", ibv_destroy_qp(rc));
  if (srq != nullptr) Destroy("ibv_destroy_srq", ibv_destroy_srq(srq));
  if (zcq != nullptr) Destroy("ibv_destroy_cq(compressed)", ibv_destroy_cq(ibv_cq_ex_to_cq(zcq)));
  if (dvcq != nullptr) Destroy("ibv_destroy_cq(mlx5dv)", ibv_destroy_cq(ibv_cq_ex_to_cq(dvcq)));
  if (cqex != nullptr) Destroy("ibv_destroy_cq(ex)", ibv_destroy_cq(ibv_cq_ex_to_cq(cqex)));
  Destroy("ibv_destroy_cq", ibv_destroy_cq(cq));
  if (channel != nullptr) Destroy("ibv_destroy_comp_channel", ibv_destroy_comp_channel(channel));
  if (dm_mr != nullptr) Destroy("ibv_dereg_mr(device memory)", ibv_dereg_mr(dm_mr));
  if (dm != nullptr) Destroy("ibv_free_dm", ibv_free_dm(dm));
  if (dmabuf_mr != nullptr) Destroy("ibv_dereg_mr(dma-buf)", ibv_dereg_mr(dmabuf_mr));
  if (dmabuf_fd >= 0) close(dmabuf_fd);
  if (odp != nullptr) Destroy("ibv_dereg_mr(on demand)", ibv_dereg_mr(odp));
  if (mw2 != nullptr) Destroy("ibv_dealloc_mw(type 2)", ibv_dealloc_mw(mw2));
  if (mw1 != nullptr) Destroy("ibv_dealloc_mw(type 1)", ibv_dealloc_mw(mw1));
  if (mr2 != nullptr) Destroy("ibv_dereg_mr(relaxed ordering)", ibv_dereg_mr(mr2));
  if (mr != nullptr) Destroy("ibv_dereg_mr", ibv_dereg_mr(mr));
  Destroy("ibv_dealloc_pd", ibv_dealloc_pd(pd));
  Destroy("ibv_close_device", ibv_close_device(ctx));
  ibv_free_device_list(list);
  std::printf("%d step(s) skipped\n", g_failed_steps);
  return 0;
}
