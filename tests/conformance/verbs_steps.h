// Steps and queue-pair helpers shared by the project's conformance programs
// (rxp_verbs_exercise, rxp_verbs_processes): one printed line per step, with only
// run-independent facts, so that a native run and a run under `rdmaproxy run` compare byte for
// byte.
#pragma once

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rxp_conformance {

// Steps that failed so far; the program exits non-zero when there are any.
inline int g_failures = 0;

inline void Ok(const char* step, const char* fmt = "", ...) {
  std::printf("ok %s", step);
  if (fmt[0] != '\0') {
    std::printf(" ");
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
  }
  std::printf("\n");
  std::fflush(stdout);
}

inline void Fail(const char* step, const char* fmt, ...) {
  std::printf("FAIL %s: ", step);
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
  ++g_failures;
}

// A step whose outcome (success or an errno) is printed and compared, not asserted.
inline void Outcome(const char* step, int err) {
  if (err == 0)
    std::printf("ok %s\n", step);
  else
    std::printf("errno %s %s\n", step, strerrorname_np(err));
  std::fflush(stdout);
}

[[noreturn]] inline void Die(const char* step, const char* what) {
  Fail(step, "%s: %s", what, std::strerror(errno));
  std::exit(1);
}

// Opens the device named `name` (step "open"), or exits with status 1 and a FAIL line.
inline ibv_context* OpenDeviceNamed(const char* name) {
  int num = 0;
  ibv_device** list = ibv_get_device_list(&num);
  if (list == nullptr) Die("device_list", "ibv_get_device_list");
  ibv_device* dev = nullptr;
  for (int i = 0; i < num; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), name) == 0) dev = list[i];
  if (dev == nullptr) {
    Fail("device_list", "no device %s", name);
    std::exit(1);
  }
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) Die("open", "ibv_open_device");
  ibv_free_device_list(list);  // an open device outlives the list (ibv_free_device_list(3))
  Ok("open", "%s", name);
  return ctx;
}

// Two QPs of one type, connected to each other on one port.
struct Loopback {
  ibv_qp* a = nullptr;
  ibv_qp* b = nullptr;
};

inline int ToInit(ibv_qp* qp, ibv_qp_type type) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = 1;
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (type == IBV_QPT_UD) {
    attr.qkey = 0x11111111;
    mask |= IBV_QP_QKEY;
  } else {
    attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  return ibv_modify_qp(qp, &attr, mask);
}

inline int RcToRts(ibv_qp* qp, uint32_t dest_qpn, const ibv_gid& gid, int gid_index) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = dest_qpn;
  attr.rq_psn = 0;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = gid;
  attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
  attr.ah_attr.grh.hop_limit = 1;
  attr.ah_attr.port_num = 1;
  if (int r = ibv_modify_qp(qp, &attr,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return r;
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.sq_psn = 0;
  attr.max_rd_atomic = 1;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

inline int UdToRts(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  if (int r = ibv_modify_qp(qp, &attr, IBV_QP_STATE)) return r;
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

// Polls `cq` until `n` completions arrive or ~5 s pass; returns how many, fills `wc`.
inline int PollFor(ibv_cq* cq, int n, ibv_wc* wc) {
  int got = 0;
  for (int spins = 0; got < n && spins < 50000; ++spins) {
    int r = ibv_poll_cq(cq, n - got, wc + got);
    if (r < 0) return r;
    got += r;
    if (r == 0) usleep(100);
  }
  return got;
}

}  // namespace rxp_conformance
