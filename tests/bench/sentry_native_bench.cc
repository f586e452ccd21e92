// rxp_sentry_native_bench [ITERATIONS] [RUNS] [GROUP]: sentry mode's own per-command cost,
// natively, on a machine without RDMA hardware -- the figure to profile when vm.bench.sentry
// (issue 6, under TCG) is too slow. It drives the C API exactly as rxp_sentry_bench does (app
// memory is a memfd mapped twice, reached through the callbacks; app fd numbers of its own)
// with the same request layouts (abi/testing/request_builder.h, as rdma-core lays them out and
// tests/data/vectors captured them), but the "device" is /dev/null and its kernel is a fake in
// this program: ioctl(2) and write(2) are defined here, so the library's unmodified
// HostDeviceFile calls land in FakeKernel for the two /dev/null fds the benchmark knows, and in
// the real system call for every other fd.
//
// FakeKernel answers like ib_uverbs would on success -- QUERY_PORT's response, new PD and MR
// handles, VALID_OUTPUT on the attributes it wrote -- so the library runs its whole success
// path (Complete, Settle, copy-out). Each command is timed directly on the fake device and
// through the C API; the report is the median per command over RUNS runs, the nanoseconds the
// library adds and the ratio. The process fails if the library refused anything or a reply did
// not reach the app. Prints figures; asserts nothing about timing. For a profile, one group of
// commands alone:
//   valgrind --tool=callgrind --toggle-collect=rxp_ioctl --toggle-collect=rxp_write
//       build/tests/bench/rxp_sentry_native_bench 2000 1 query_port
#include <fcntl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "abi/testing/fake_kernel_reply.h"
#include "abi/testing/request_builder.h"
#include "rdmaproxy/rdmaproxy.h"
#include "tests/bench/sentry_bench_app.h"

namespace {

using rxp::abi::testing::CopyToAttr;
using rxp::abi::testing::FindAttr;
using rxp::abi::testing::IoctlBuilder;
using namespace rxp_bench;  // the shared app model and timing (sentry_bench_app.h)

// ---- the fake device --------------------------------------------------------------------

// The fds whose ioctl / write FakeKernel answers: the library's host fd and the direct one.
int fake_fds[2] = {-1, -1};
bool IsFake(int fd) { return fd >= 0 && (fd == fake_fds[0] || fd == fake_fds[1]); }

struct FakeKernel {
  // Object handles as ib_uverbs hands them out: the lowest free one (xa_alloc on the file's
  // idr), reused once destroyed.
  std::vector<bool> used;
  uint32_t NewHandle() {
    const auto free = std::find(used.begin(), used.end(), false);
    const auto h = static_cast<uint32_t>(free - used.begin());
    if (free == used.end()) {
      used.push_back(true);
    } else {
      *free = true;
    }
    return h;
  }
  long Destroy(ib_uverbs_ioctl_hdr* h, uint16_t attr_id) {
    const ib_uverbs_attr* a = FindAttr(h, attr_id);
    if (a == nullptr || a->data >= used.size() || !used[a->data]) return -ENOENT;
    used[a->data] = false;
    return 0;
  }


  long Ioctl(unsigned long request, void* arg) {
    if (request != RDMA_VERBS_IOCTL) return -ENOTTY;
    auto* h = static_cast<ib_uverbs_ioctl_hdr*>(arg);
    if (h->object_id == UVERBS_OBJECT_DEVICE && h->method_id == UVERBS_METHOD_QUERY_PORT) {
      ib_uverbs_query_port_resp_ex resp{};
      resp.legacy_resp.port_cap_flags = 0x10000;
      resp.legacy_resp.max_msg_sz = 1u << 31;
      resp.legacy_resp.gid_tbl_len = 1024;
      resp.legacy_resp.pkey_tbl_len = 1;
      resp.legacy_resp.state = 4;  // IB_PORT_ACTIVE
      resp.legacy_resp.max_mtu = 5;
      resp.legacy_resp.active_mtu = 3;
      resp.legacy_resp.link_layer = 2;  // Ethernet
      return CopyToAttr(FindAttr(h, UVERBS_ATTR_QUERY_PORT_RESP), resp);
    }
    if (h->object_id == UVERBS_OBJECT_DEVICE && h->method_id == UVERBS_METHOD_INVOKE_WRITE) {
      const ib_uverbs_attr* cmd = FindAttr(h, UVERBS_ATTR_WRITE_CMD);
      if (cmd == nullptr || cmd->data != IB_USER_VERBS_CMD_ALLOC_PD) return -EOPNOTSUPP;
      return CopyToAttr(FindAttr(h, UVERBS_ATTR_CORE_OUT), ib_uverbs_alloc_pd_resp{NewHandle()});
    }
    if (h->object_id == UVERBS_OBJECT_PD && h->method_id == UVERBS_METHOD_PD_DESTROY)
      return Destroy(h, UVERBS_ATTR_DESTROY_PD_HANDLE);
    if (h->object_id == UVERBS_OBJECT_MR && h->method_id == UVERBS_METHOD_MR_DESTROY)
      return Destroy(h, UVERBS_ATTR_DESTROY_MR_HANDLE);
    return -EOPNOTSUPP;
  }

  long Write(const void* buffer, size_t length) {
    ib_uverbs_cmd_hdr h;
    if (length < sizeof(h)) return -EINVAL;
    std::memcpy(&h, buffer, sizeof(h));
    const auto* core = static_cast<const std::byte*>(buffer) + sizeof(h);
    if (h.command == IB_USER_VERBS_CMD_GET_CONTEXT) {
      ib_uverbs_get_context cmd;
      std::memcpy(&cmd, core, sizeof(cmd));
      // No async event fd (-1): the library skips adopting it.
      const ib_uverbs_get_context_resp resp{static_cast<__u32>(-1), 1};
      std::memcpy(reinterpret_cast<void*>(cmd.response), &resp, sizeof(resp));
      return static_cast<long>(length);
    }
    if (h.command == IB_USER_VERBS_CMD_REG_MR) {
      ib_uverbs_reg_mr cmd;
      std::memcpy(&cmd, core, sizeof(cmd));
      const uint32_t handle = NewHandle();
      const ib_uverbs_reg_mr_resp resp{handle, 0x200 + handle, 0x200 + handle};
      std::memcpy(reinterpret_cast<void*>(cmd.response), &resp, sizeof(resp));
      return static_cast<long>(length);
    }
    return -EOPNOTSUPP;
  }
};
FakeKernel fake_kernel;

}  // namespace

// The program's own ioctl and write: they take precedence over libc's for the library linked
// into it, so the fake device's fds reach FakeKernel and every other fd the real syscall.
extern "C" int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (!IsFake(fd)) return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
  return static_cast<int>(rxp::abi::testing::AsLibcResult(fake_kernel.Ioctl(request, arg)));
}

extern "C" ssize_t write(int fd, const void* buffer, size_t length) {
  if (!IsFake(fd)) return syscall(SYS_write, fd, buffer, length);
  return rxp::abi::testing::AsLibcResult(fake_kernel.Write(buffer, length));
}

namespace {

// The commands measured, one sample per call.
enum Command { kQueryPort, kAllocPd, kPdDestroy, kRegMr, kMrDestroy, kCommands };
constexpr const char* kNames[kCommands] = {
    "DEVICE.QUERY_PORT (ioctl)", "INVOKE_WRITE ALLOC_PD (ioctl)", "PD.DESTROY (ioctl)",
    "REG_MR 64 KiB (legacy write)", "MR.DESTROY (ioctl)"};
constexpr uint32_t kDriver = RDMA_DRIVER_RXE;
using Samples = std::vector<uint64_t>[kCommands];


uint32_t U32At(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}


// The commands in three groups, each run `iterations` times per round as rxp_sentry_bench
// issues them: QUERY_PORT; ALLOC_PD + PD.DESTROY; REG_MR + MR.DESTROY (on one PD).
void QueryPort(Issuer& is, int iterations, Samples& t) {
  unsigned char* const out_at = is.scratch + 1024;
  const auto out = reinterpret_cast<uint64_t>(out_at);
  for (int i = 0; i < iterations; ++i) {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, kDriver);
    b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
        .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, out, sizeof(ib_uverbs_query_port_resp_ex));
    std::memset(out_at, 0, sizeof(ib_uverbs_query_port_resp_ex));
    t[kQueryPort].push_back(TimeIoctl(is, b, "QUERY_PORT"));
    if (U32At(out_at) != 0x10000) Die("QUERY_PORT: no response in the app", 0);
  }
}

uint64_t AllocPd(Issuer& is) {
  IoctlBuilder alloc(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, kDriver);
  alloc.Inline(UVERBS_ATTR_CORE_IN, 0, 8)
      .Pointer(UVERBS_ATTR_CORE_OUT, reinterpret_cast<uint64_t>(is.scratch + 1024),
               sizeof(ib_uverbs_alloc_pd_resp))
      .Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8);
  return TimeIoctl(is, alloc, "ALLOC_PD");
}

uint64_t Destroy(Issuer& is, uint16_t object, uint16_t method, uint16_t attr, uint32_t handle) {
  IoctlBuilder destroy(object, method, kDriver);
  destroy.Handle(attr, handle);
  return TimeIoctl(is, destroy, "DESTROY");
}

void Pd(Issuer& is, int iterations, Samples& t) {
  for (int i = 0; i < iterations; ++i) {
    t[kAllocPd].push_back(AllocPd(is));
    t[kPdDestroy].push_back(Destroy(is, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY,
                                    UVERBS_ATTR_DESTROY_PD_HANDLE, U32At(is.scratch + 1024)));
  }
}

void Mr(Issuer& is, int iterations, Samples& t) {
  (void)AllocPd(is);
  const uint32_t pd = U32At(is.scratch + 1024);
  const auto buffer = reinterpret_cast<uint64_t>(is.scratch + 65536);
  for (int i = 0; i < iterations; ++i) {
    t[kRegMr].push_back(rxp_bench::TimeRegMr(is, pd, buffer, 65536,
                                             reinterpret_cast<uint64_t>(is.scratch + 1024)));
    t[kMrDestroy].push_back(Destroy(is, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
                                    UVERBS_ATTR_DESTROY_MR_HANDLE, U32At(is.scratch + 1024)));
  }
  (void)Destroy(is, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, UVERBS_ATTR_DESTROY_PD_HANDLE, pd);
}

struct Group {
  const char* name;
  void (*run)(Issuer&, int, Samples&);
};
constexpr Group kGroups[] = {{"query_port", QueryPort}, {"pd", Pd}, {"mr", Mr}};

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  // One group alone (query_port, pd, mr): a profile of just those commands.
  const std::string only = argc > 3 ? argv[3] : "";
  const bool known = only.empty() || std::any_of(std::begin(kGroups), std::end(kGroups),
                                                 [&](const Group& g) { return only == g.name; });
  if (iterations <= 0 || runs <= 0 || !known) {
    std::fprintf(stderr,
                 "usage: rxp_sentry_native_bench [ITERATIONS] [RUNS] [query_port|pd|mr]\n");
    return 2;
  }
  App app;
  rxp_config* config = nullptr;
  const rxp_app_ops ops = App::Ops();
  if (int r = rxp_config_create(&config); r) Die("config", r);
  if (int r = rxp_config_set_app_ops(config, &ops); r) Die("config", r);
  // rxe, as in the VM test bed; the driver id is given, so no netlink is needed.
  if (int r = rxp_config_add_device(config, "uverbs0", "/dev/null", RDMA_DRIVER_RXE); r)
    Die("add_device", r);
  rxp_sentry* sentry = nullptr;
  if (int r = rxp_sentry_create(config, &sentry); r) Die("sentry", r);
  rxp_config_destroy(config);
  rxp_file* file = nullptr;
  if (int r = rxp_open(sentry, "/dev/infiniband/uverbs0", O_RDWR, &file); r) Die("open", r);
  fake_fds[0] = rxp_file_host_fd(file);
  fake_fds[1] = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fake_fds[1] < 0) Die("open /dev/null", -errno);

  Issuer direct = rxp_bench::DirectIssuer(fake_fds[1]);
  Issuer proxied = rxp_bench::SentryIssuer(file, app);
  GetContext(direct);
  GetContext(proxied);

  std::printf("sentry mode natively (fake device), %d iterations x %d runs per command, "
              "median ns per call (per run: min..max of the run medians)\n",
              iterations, runs);
  std::vector<uint64_t> run_medians[2][kCommands];
  for (int run = 0; run < runs; ++run) {
    Samples td, tp;
    // Interleave short rounds so drift hits both alike.
    for (int round = 0; round < 4; ++round) {
      for (const Group& g : kGroups) {
        if (!only.empty() && only != g.name) continue;
        g.run(direct, (iterations + 3) / 4, td);
        g.run(proxied, (iterations + 3) / 4, tp);
      }
    }
    for (int c = 0; c < kCommands; ++c) {
      if (td[c].empty()) continue;
      run_medians[0][c].push_back(Median(td[c]));
      run_medians[1][c].push_back(Median(tp[c]));
    }
  }
  std::printf("%-32s %8s %8s %8s %7s   %s\n", "command", "direct", "sentry", "added", "ratio",
              "sentry per run");
  for (int c = 0; c < kCommands; ++c) {
    if (run_medians[0][c].empty()) continue;
    const uint64_t md = Median(run_medians[0][c]), mp = Median(run_medians[1][c]);
    const auto [lo, hi] = std::minmax_element(run_medians[1][c].begin(), run_medians[1][c].end());
    std::printf("%-32s %8llu %8llu %8llu %6.2fx   %llu..%llu\n", kNames[c],
                static_cast<unsigned long long>(md), static_cast<unsigned long long>(mp),
                static_cast<unsigned long long>(mp > md ? mp - md : 0),
                static_cast<double>(mp) / static_cast<double>(std::max<uint64_t>(md, 1)),
                static_cast<unsigned long long>(*lo), static_cast<unsigned long long>(*hi));
  }
  rxp_stats stats{};
  rxp_sentry_stats(sentry, &stats);
  const uint64_t refused =
      stats.refused_decode + stats.refused_policy + stats.refused_quota + stats.refused_state;
  std::printf("%llu commands, %llu refused, %llu kernel errors\n",
              static_cast<unsigned long long>(stats.commands),
              static_cast<unsigned long long>(refused),
              static_cast<unsigned long long>(stats.kernel_errors));
  rxp_close(file);
  rxp_sentry_destroy(sentry);
  close(fake_fds[1]);
  // Only the success path is measured: a refusal or a kernel error would time something else.
  return refused == 0 && stats.kernel_errors == 0 ? 0 : 1;
}
