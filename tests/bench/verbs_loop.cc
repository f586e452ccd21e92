// rxp_verbs_loop DEVICE GID_INDEX SECONDS: the verbs control path in a loop -- open the
// device, alloc a PD, register 4 KiB, create a CQ and an RC QP, modify it INIT -> RTR -> RTS
// (connected to itself), destroy everything, close -- for SECONDS, and print the loops per
// second. Run natively and under `rdmaproxy run` in the same boot, the ratio is what the proxy
// costs a control-path-heavy program (issue 4's target: <= 3x). Prints figures; asserts
// nothing about timing.
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

void OneLoop(ibv_device* dev, int gid_index, std::vector<char>& buffer) {
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) Die("ibv_open_device");
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) Die("ibv_alloc_pd");
  ibv_mr* mr = ibv_reg_mr(pd, buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) Die("ibv_reg_mr");
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  if (cq == nullptr) Die("ibv_create_cq");
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {8, 8, 1, 1, 0};
  ibv_qp* qp = ibv_create_qp(pd, &init);
  if (qp == nullptr) Die("ibv_create_qp");
  ibv_gid gid{};
  if (ibv_query_gid(ctx, 1, gid_index, &gid) != 0) Die("ibv_query_gid");

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    Die("modify INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = qp->qp_num;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = gid;
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    Die("modify RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    Die("modify RTS");

  if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) ||
      ibv_close_device(ctx))
    Die("teardown");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: rxp_verbs_loop DEVICE GID_INDEX SECONDS\n");
    return 2;
  }
  const int gid_index = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  int num = 0;
  ibv_device** list = ibv_get_device_list(&num);
  ibv_device* dev = nullptr;
  for (int i = 0; list != nullptr && i < num; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), argv[1]) == 0) dev = list[i];
  if (dev == nullptr) {
    std::fprintf(stderr, "no device %s\n", argv[1]);
    return 1;
  }
  std::vector<char> buffer(4096);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  long loops = 0;
  double elapsed = 0;
  do {
    OneLoop(dev, gid_index, buffer);
    ++loops;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  std::printf("verbs control-path loops: %ld in %.2f s = %.1f loops/s\n", loops, elapsed,
              static_cast<double>(loops) / elapsed);
  ibv_free_device_list(list);
  return 0;
}
