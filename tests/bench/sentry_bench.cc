// rxp_sentry_bench HOST_IBDEV: what sentry mode adds to a command. The same commands are
// issued on the same device in the same boot, first directly (ioctl / write on a host fd, the
// way rdma-core would) and then through the C API with non-identity app memory (a memfd mapped
// twice) and app fd numbers. Each call is timed on its own; the report is the median per
// command, the nanoseconds the proxy adds, and the ratio. Issue 6's target: <= 2 us added per
// command (under TCG in the VM test bed). Prints figures; asserts nothing about timing.
#include <fcntl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "abi/testing/request_builder.h"
#include "rdmaproxy/host_rdma_devices.h"
#include "rdmaproxy/rdmaproxy.h"

namespace {

using rxp::abi::testing::IoctlBuilder;

[[noreturn]] void Die(const char* what, long r) {
  std::fprintf(stderr, "rxp_sentry_bench: %s: %s (%s)\n", what,
               r < 0 ? strerrorname_np(static_cast<int>(-r)) : "?", rxp_last_error());
  std::exit(1);
}

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t Median(std::vector<uint64_t> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// App memory of the benchmark's "app": a memfd mapped twice; commands are built in the app
// view, the library reaches them through the callbacks, the kernel pins the host view.
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
  }
  bool In(uint64_t a, uint64_t n) const {
    const auto base = reinterpret_cast<uint64_t>(app);
    return a >= base && n <= kSize && a - base <= kSize - n;
  }
  unsigned char* Host(uint64_t a) { return host + (a - reinterpret_cast<uint64_t>(app)); }
};
App& Of(void* p) { return *static_cast<App*>(p); }
int ReadMem(void* p, uint64_t a, void* b, size_t n) {
  if (!Of(p).In(a, n)) return -EFAULT;
  std::memcpy(b, Of(p).Host(a), n);
  return 0;
}
int WriteMem(void* p, uint64_t a, const void* b, size_t n) {
  if (!Of(p).In(a, n)) return -EFAULT;
  std::memcpy(Of(p).Host(a), b, n);
  return 0;
}
int HostAddr(void* p, uint64_t a, uint64_t n, uint64_t* h) {
  if (!Of(p).In(a, n)) return -EFAULT;
  *h = reinterpret_cast<uint64_t>(Of(p).Host(a));
  return 0;
}
int Resolve(void* p, int fd, rxp_fd_target* t) {
  auto it = Of(p).fds.find(fd);
  if (it == Of(p).fds.end()) return -EBADF;
  *t = {it->second, -1, RXP_FILE_OTHER};
  return 0;
}
int Install(void* p, rxp_file* f) {
  Of(p).fds[Of(p).next_fd] = f;
  return Of(p).next_fd++;
}

// One way of issuing commands: directly on a host fd, or through a sentry file.
struct Issuer {
  std::function<long(void* cmd)> ioctl;
  std::function<long(void* buf, size_t len)> write;
  unsigned char* scratch;  // where commands and outputs live (an app address in sentry mode)
};

// The commands measured. Each returns the time of its calls (one command = one sample).
struct Bench {
  const char* name;
  std::function<void(Issuer&, std::vector<uint64_t>&)> run;
};

void GetContext(Issuer& is) {
  auto* resp = reinterpret_cast<ib_uverbs_get_context_resp*>(is.scratch + 512);
  ib_uverbs_get_context cmd{};
  cmd.response = reinterpret_cast<uint64_t>(resp);
  auto buf = rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_GET_CONTEXT, cmd, {},
                                            sizeof(*resp) / 4);
  std::memcpy(is.scratch, buf.data(), buf.size());
  if (long r = is.write(is.scratch, buf.size()); r < 0) Die("GET_CONTEXT", r);
}

// Builds `b` at scratch and times one ioctl.
uint64_t TimeIoctl(Issuer& is, const IoctlBuilder& b, const char* what) {
  const auto bytes = b.Build();
  std::memcpy(is.scratch, bytes.data(), bytes.size());
  const uint64_t t0 = NowNs();
  const long r = is.ioctl(is.scratch);
  const uint64_t t1 = NowNs();
  if (r < 0) Die(what, r);
  return t1 - t0;
}

std::vector<Bench> Benches(uint32_t driver, int iterations) {
  return {
      {"DEVICE.QUERY_PORT (ioctl)",
       [=](Issuer& is, std::vector<uint64_t>& t) {
         const auto out = reinterpret_cast<uint64_t>(is.scratch + 1024);
         for (int i = 0; i < iterations; ++i) {
           IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, driver);
           b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
               .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, out, sizeof(ib_uverbs_query_port_resp_ex));
           t.push_back(TimeIoctl(is, b, "QUERY_PORT"));
         }
       }},
      {"INVOKE_WRITE ALLOC_PD + PD.DESTROY",
       [=](Issuer& is, std::vector<uint64_t>& t) {
         const auto out = reinterpret_cast<uint64_t>(is.scratch + 1024);
         for (int i = 0; i < iterations; ++i) {
           IoctlBuilder alloc(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver);
           alloc.Inline(UVERBS_ATTR_CORE_IN, 0, 8)
               .Pointer(UVERBS_ATTR_CORE_OUT, out, sizeof(ib_uverbs_alloc_pd_resp))
               .Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8);
           t.push_back(TimeIoctl(is, alloc, "ALLOC_PD"));
           uint32_t pd;
           std::memcpy(&pd, is.scratch + 1024, 4);
           IoctlBuilder destroy(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, driver);
           destroy.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, pd);
           t.push_back(TimeIoctl(is, destroy, "PD_DESTROY"));
         }
       }},
      {"REG_MR 64 KiB (legacy write) + MR.DESTROY",
       [=](Issuer& is, std::vector<uint64_t>& t) {
         const auto out = reinterpret_cast<uint64_t>(is.scratch + 1024);
         IoctlBuilder alloc(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver);
         alloc.Inline(UVERBS_ATTR_CORE_IN, 0, 8)
             .Pointer(UVERBS_ATTR_CORE_OUT, out, sizeof(ib_uverbs_alloc_pd_resp))
             .Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8);
         (void)TimeIoctl(is, alloc, "ALLOC_PD");
         uint32_t pd;
         std::memcpy(&pd, is.scratch + 1024, 4);
         const auto buffer = reinterpret_cast<uint64_t>(is.scratch + 65536);
         for (int i = 0; i < iterations; ++i) {
           ib_uverbs_reg_mr cmd{};
           cmd.response = out;
           cmd.start = buffer;
           cmd.length = 65536;
           cmd.hca_va = buffer;
           cmd.pd_handle = pd;
           cmd.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE;
           auto w = rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_REG_MR, cmd, {},
                                                   sizeof(ib_uverbs_reg_mr_resp) / 4);
           std::memcpy(is.scratch, w.data(), w.size());
           const uint64_t t0 = NowNs();
           const long r = is.write(is.scratch, w.size());
           t.push_back(NowNs() - t0);
           if (r < 0) Die("REG_MR", r);
           uint32_t mr;
           std::memcpy(&mr, is.scratch + 1024, 4);
           IoctlBuilder destroy(UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, driver);
           destroy.Handle(UVERBS_ATTR_DESTROY_MR_HANDLE, mr);
           t.push_back(TimeIoctl(is, destroy, "MR_DESTROY"));
         }
         IoctlBuilder destroy(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, driver);
         destroy.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, pd);
         (void)TimeIoctl(is, destroy, "PD_DESTROY");
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rxp_sentry_bench HOST_IBDEV [ITERATIONS]\n");
    return 2;
  }
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 2000;
  // Resolve the device through the C API's own device list (NETLINK_RDMA).
  App app;
  rxp_config* config = nullptr;
  const rxp_app_ops ops{sizeof(rxp_app_ops), ReadMem, WriteMem, HostAddr, Resolve, Install};
  if (int r = rxp_config_create(&config); r) Die("config", r);
  if (int r = rxp_config_set_app_ops(config, &ops); r) Die("config", r);
  const std::string spec = std::string("uverbs0=") + argv[1];
  if (int r = rxp_config_select_devices(config, spec.c_str()); r) Die("select_devices", r);
  rxp_sentry* sentry = nullptr;
  if (int r = rxp_sentry_create(config, &sentry); r) Die("sentry", r);
  rxp_config_destroy(config);
  rxp_file* file = nullptr;
  if (int r = rxp_open(sentry, "/dev/infiniband/uverbs0", O_RDWR, &file); r) Die("open", r);
  const int host_fd = rxp_file_host_fd(file);
  char link[64];
  const std::string self = "/proc/self/fd/" + std::to_string(host_fd);
  const ssize_t n = readlink(self.c_str(), link, sizeof(link) - 1);
  const std::string host_path = n > 0 ? std::string(link, static_cast<size_t>(n)) : "?";

  // Direct: our own open of the same host device, as rdma-core would issue the commands.
  const int direct_fd = open(host_path.c_str(), O_RDWR | O_CLOEXEC);
  if (direct_fd < 0) Die("open host device", -errno);
  auto* direct_scratch = static_cast<unsigned char*>(
      mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  Issuer direct{[&](void* c) -> long {
                  const int r = ioctl(direct_fd, RDMA_VERBS_IOCTL, c);
                  return r < 0 ? -errno : r;
                },
                [&](void* b, size_t len) -> long {
                  const ssize_t r = write(direct_fd, b, len);
                  return r < 0 ? -errno : r;
                },
                direct_scratch};
  Issuer proxied{[&](void* c) -> long {
                   return rxp_ioctl(file, &app, RDMA_VERBS_IOCTL, reinterpret_cast<uint64_t>(c));
                 },
                 [&](void* b, size_t len) -> long {
                   return rxp_write(file, &app, reinterpret_cast<uint64_t>(b), len);
                 },
                 app.app};
  GetContext(direct);
  GetContext(proxied);

  // Every ioctl header carries the device's driver id (a provider knows its own).
  uint32_t driver = 0;
  auto devices = rxp::proxy::QueryHostRdmaDevices();
  if (!devices) Die("NETLINK_RDMA", -devices.error().errnum);
  for (const auto& d : *devices)
    if (d.ibdev == argv[1]) driver = d.driver_id;

  std::printf("sentry-mode overhead on %s (%s), %d iterations per command, median ns per call\n",
              argv[1], host_path.c_str(), iterations);
  std::printf("%-42s %10s %10s %10s %8s\n", "command", "direct", "sentry", "added", "ratio");
  uint64_t worst_added = 0;
  for (const Bench& b : Benches(driver, iterations)) {
    std::vector<uint64_t> td, tp;
    // Interleave short rounds so drift in the VM hits both alike.
    for (int round = 0; round < 4; ++round) {
      b.run(direct, td);
      b.run(proxied, tp);
    }
    const uint64_t md = Median(td), mp = Median(tp);
    const uint64_t added = mp > md ? mp - md : 0;
    worst_added = std::max(worst_added, added);
    std::printf("%-42s %10llu %10llu %10llu %7.2fx\n", b.name,
                static_cast<unsigned long long>(md), static_cast<unsigned long long>(mp),
                static_cast<unsigned long long>(added), static_cast<double>(mp) / static_cast<double>(md));
  }
  rxp_stats stats{};
  rxp_sentry_stats(sentry, &stats);
  std::printf("largest added median: %llu ns per command (target <= 2000 ns); %llu commands, "
              "%llu refused\n",
              static_cast<unsigned long long>(worst_added),
              static_cast<unsigned long long>(stats.commands),
              static_cast<unsigned long long>(stats.refused_decode + stats.refused_policy +
                                              stats.refused_quota + stats.refused_state));
  rxp_close(file);
  rxp_sentry_destroy(sentry);
  close(direct_fd);
  return 0;
}
