// What rxp_sentry_bench (on the VM's real device) and rxp_sentry_native_bench (against a fake
// device) share: the benchmark's "app" as a sentry-mode embedder sees it -- app memory is a
// memfd mapped twice (commands are built in the app view, the library reaches them through the
// callbacks, the kernel pins the host view), and app fd numbers of its own -- plus the timing
// helpers. Header-only: each benchmark is one program.
#pragma once

#include <errno.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "abi/testing/request_builder.h"
#include "rdmaproxy/rdmaproxy.h"

namespace rxp_bench {

[[noreturn]] inline void Die(const char* what, long r) {
  std::fprintf(stderr, "%s: %s: %s (%s)\n", program_invocation_short_name, what,
               r < 0 ? strerrorname_np(static_cast<int>(-r)) : "?", rxp_last_error());
  std::exit(1);
}

inline uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t Median(std::vector<uint64_t> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct App {
  static constexpr size_t kSize = 1 << 20;
  unsigned char* app = nullptr;
  unsigned char* host = nullptr;
  std::map<int, rxp_file*> fds;
  int next_fd = 3;
  App() {
    const int fd = memfd_create("rxp-sentry-bench", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, kSize) != 0) Die("memfd", -errno);
    host = static_cast<unsigned char*>(mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    app = static_cast<unsigned char*>(mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    if (host == MAP_FAILED || app == MAP_FAILED) Die("mmap", -errno);
  }
  bool In(uint64_t a, uint64_t n) const {
    const auto base = reinterpret_cast<uint64_t>(app);
    return a >= base && n <= kSize && a - base <= kSize - n;
  }
  unsigned char* Host(uint64_t a) { return host + (a - reinterpret_cast<uint64_t>(app)); }

  // The embedder callbacks (rdmaproxy.h, struct rxp_app_ops) over this app.
  static App& Of(void* p) { return *static_cast<App*>(p); }
  static int ReadMem(void* p, uint64_t a, void* b, size_t n) {
    if (!Of(p).In(a, n)) return -EFAULT;
    std::memcpy(b, Of(p).Host(a), n);
    return 0;
  }
  static int WriteMem(void* p, uint64_t a, const void* b, size_t n) {
    if (!Of(p).In(a, n)) return -EFAULT;
    std::memcpy(Of(p).Host(a), b, n);
    return 0;
  }
  static int HostAddr(void* p, uint64_t a, uint64_t n, uint64_t* h) {
    if (!Of(p).In(a, n)) return -EFAULT;
    *h = reinterpret_cast<uint64_t>(Of(p).Host(a));
    return 0;
  }
  static int Resolve(void* p, int fd, rxp_fd_target* t) {
    auto it = Of(p).fds.find(fd);
    if (it == Of(p).fds.end()) return -EBADF;
    *t = {it->second, -1, RXP_FILE_OTHER};
    return 0;
  }
  static int Install(void* p, rxp_file* f) {
    Of(p).fds[Of(p).next_fd] = f;
    return Of(p).next_fd++;
  }
  static rxp_app_ops Ops() {
    return rxp_app_ops{sizeof(rxp_app_ops), ReadMem, WriteMem, HostAddr, Resolve, Install};
  }
};

// One way of issuing commands: directly on a host fd, or through a sentry file.
struct Issuer {
  std::function<long(void* cmd)> ioctl;
  std::function<long(void* buf, size_t len)> write;
  unsigned char* scratch;  // where commands and outputs live (an app address in sentry mode)
};

// Commands issued directly on a host fd (as rdma-core would), from a scratch buffer of ours:
// shared memfd pages like the sentry's app memory, so that a REG_MR pins the same kind of page
// both ways (the kernel pins shmem and anonymous pages at different costs).
inline Issuer DirectIssuer(int fd) {
  const int mem = memfd_create("rxp-direct-scratch", MFD_CLOEXEC);
  if (mem < 0 || ftruncate(mem, 1 << 20) != 0) Die("memfd", -errno);
  auto* scratch = static_cast<unsigned char*>(
      mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0));
  close(mem);
  if (scratch == MAP_FAILED) Die("mmap", -errno);
  return Issuer{[fd](void* c) -> long {
                  const int r = ioctl(fd, RDMA_VERBS_IOCTL, c);
                  return r < 0 ? -errno : r;
                },
                [fd](void* b, size_t len) -> long {
                  const ssize_t r = write(fd, b, len);
                  return r < 0 ? -errno : r;
                },
                scratch};
}

// Commands issued through sentry file `file`, from the app view of `app`'s memory.
inline Issuer SentryIssuer(rxp_file* file, App& app) {
  return Issuer{[file, &app](void* c) -> long {
                  return rxp_ioctl(file, &app, RDMA_VERBS_IOCTL, reinterpret_cast<uint64_t>(c));
                },
                [file, &app](void* b, size_t len) -> long {
                  return rxp_write(file, &app, reinterpret_cast<uint64_t>(b), len);
                },
                app.app};
}

// The legacy GET_CONTEXT every file needs before its first command, with the driver data its
// provider sends. rxe sends none. mlx5's kernel refuses a request without its own
// (mlx5_ib_alloc_ucontext(): EINVAL below the v2 layout), so it gets what rdma-core's
// mlx5_alloc_context() sends by default once the sandbox's policy has refused its first,
// DEVX request: 16 bfregs, 4 of them low-latency, CQE version 1, 4 KiB and dynamic UARs; the
// response leaves room for mlx5_ib_alloc_ucontext_resp.
inline void GetContext(Issuer& is, uint32_t driver_id = 0) {
  auto* resp = reinterpret_cast<ib_uverbs_get_context_resp*>(is.scratch + 512);
  ib_uverbs_get_context cmd{};
  cmd.response = reinterpret_cast<uint64_t>(resp);
  std::vector<std::byte> driver;
  size_t resp_size = sizeof(*resp);
  if (driver_id == RDMA_DRIVER_MLX5) {
    mlx5_ib_alloc_ucontext_req_v2 req{};
    req.total_num_bfregs = 16;
    req.num_low_latency_bfregs = 4;
    req.max_cqe_version = 1;
    req.lib_caps = MLX5_LIB_CAP_4K_UAR | MLX5_LIB_CAP_DYN_UAR;
    driver.resize(sizeof(req));
    std::memcpy(driver.data(), &req, sizeof(req));
    resp_size += sizeof(mlx5_ib_alloc_ucontext_resp);
  }
  auto buf = rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_GET_CONTEXT, cmd, driver,
                                            static_cast<uint16_t>(resp_size / 4));
  std::memcpy(is.scratch, buf.data(), buf.size());
  if (long r = is.write(is.scratch, buf.size()); r < 0) Die("GET_CONTEXT", r);
}

// Builds `b` at the issuer's scratch and times one ioctl.
inline uint64_t TimeIoctl(Issuer& is, const rxp::abi::testing::IoctlBuilder& b, const char* what) {
  const auto bytes = b.Build();
  std::memcpy(is.scratch, bytes.data(), bytes.size());
  const uint64_t t0 = NowNs();
  const long r = is.ioctl(is.scratch);
  const uint64_t t1 = NowNs();
  if (r < 0) Die(what, r);
  return t1 - t0;
}

// Times one legacy-write REG_MR of `length` bytes at `buffer` on PD `pd` (the response at
// `response`); returns the time and stores the new MR handle's response where asked.
inline uint64_t TimeRegMr(Issuer& is, uint32_t pd, uint64_t buffer, uint64_t length,
                          uint64_t response) {
  ib_uverbs_reg_mr cmd{};
  cmd.response = response;
  cmd.start = buffer;
  cmd.length = length;
  cmd.hca_va = buffer;
  cmd.pd_handle = pd;
  cmd.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE;
  auto w = rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_REG_MR, cmd, {},
                                          sizeof(ib_uverbs_reg_mr_resp) / 4);
  std::memcpy(is.scratch, w.data(), w.size());
  const uint64_t t0 = NowNs();
  const long r = is.write(is.scratch, w.size());
  const uint64_t t1 = NowNs();
  if (r < 0) Die("REG_MR", r);
  return t1 - t0;
}

}  // namespace rxp_bench
