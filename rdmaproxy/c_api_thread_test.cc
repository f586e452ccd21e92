// The C API's threading promise (docs/embedding.md, "Ownership and threading"): every function
// may be called from any thread; commands on one uverbs file run one at a time, different files
// in parallel; a handle closed while another thread uses it is EBADF from then on, never a
// crash, and the objects of a closed file leave the sandbox's quotas.
//
// The "device" is /dev/null and its kernel a fake in this program, as in
// rxp_sentry_native_bench: ioctl(2) and write(2) are defined here, so the library's own host
// calls on the fds this test registers reach FakeUverbs, and every other fd the real system
// call. FakeUverbs answers like ib_uverbs does on success (new handles, VALID_OUTPUT) and keeps
// each file's live handles, so a handle issued twice or destroyed twice fails the test. These
// tests check the library's locking, not the kernel (the mini-sentry VM test does that); run
// them under ASan (CI's stage 4) or TSan for races.
#include "rdmaproxy/rdmaproxy.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "abi/testing/fake_kernel_reply.h"
#include "abi/testing/request_builder.h"

namespace {

using rxp::abi::testing::CopyToAttr;
using rxp::abi::testing::FindAttr;
using rxp::abi::testing::IoctlBuilder;

// ---- the fake kernel -------------------------------------------------------------------

class FakeUverbs {
 public:
  static FakeUverbs& Get() {
    static FakeUverbs fake;
    return fake;
  }
  // A library host fd from now on: a fresh file with no objects.
  void Register(int fd) {
    std::lock_guard lock(mutex_);
    files_[fd] = {};
  }
  bool Knows(int fd) {
    std::lock_guard lock(mutex_);
    return files_.count(fd) != 0;
  }
  // Handles created, destroyed, and the misuses that must never happen.
  uint64_t created() const { return created_.load(); }
  uint64_t destroyed() const { return destroyed_.load(); }
  uint64_t unknown_destroys() const { return unknown_destroys_.load(); }

  long Ioctl(int fd, void* arg) {
    auto* h = static_cast<ib_uverbs_ioctl_hdr*>(arg);
    if (h->object_id == UVERBS_OBJECT_DEVICE && h->method_id == UVERBS_METHOD_QUERY_PORT) {
      ib_uverbs_query_port_resp_ex resp{};
      resp.legacy_resp.state = 4;  // IB_PORT_ACTIVE
      resp.legacy_resp.gid_tbl_len = 16;
      return CopyToAttr(FindAttr(h, UVERBS_ATTR_QUERY_PORT_RESP), resp);
    }
    if (h->object_id == UVERBS_OBJECT_DEVICE && h->method_id == UVERBS_METHOD_INVOKE_WRITE) {
      const ib_uverbs_attr* cmd = FindAttr(h, UVERBS_ATTR_WRITE_CMD);
      if (cmd == nullptr || cmd->data != IB_USER_VERBS_CMD_ALLOC_PD) return -EOPNOTSUPP;
      const uint32_t handle = NewHandle(fd);
      return CopyToAttr(FindAttr(h, UVERBS_ATTR_CORE_OUT), ib_uverbs_alloc_pd_resp{handle});
    }
    if (h->object_id == UVERBS_OBJECT_PD && h->method_id == UVERBS_METHOD_PD_DESTROY) {
      const ib_uverbs_attr* a = FindAttr(h, UVERBS_ATTR_DESTROY_PD_HANDLE);
      return a == nullptr ? -EINVAL : Destroy(fd, static_cast<uint32_t>(a->data));
    }
    return -EOPNOTSUPP;
  }

  long Write(const void* buffer, size_t length) {
    ib_uverbs_cmd_hdr h;
    if (length < sizeof(h)) return -EINVAL;
    std::memcpy(&h, buffer, sizeof(h));
    if (h.command != IB_USER_VERBS_CMD_GET_CONTEXT) return -EOPNOTSUPP;
    ib_uverbs_get_context cmd;
    std::memcpy(&cmd, static_cast<const std::byte*>(buffer) + sizeof(h), sizeof(cmd));
    // No async event fd (-1): the library adopts none.
    const ib_uverbs_get_context_resp resp{static_cast<__u32>(-1), 1};
    std::memcpy(reinterpret_cast<void*>(cmd.response), &resp, sizeof(resp));
    return static_cast<long>(length);
  }

 private:
  uint32_t NewHandle(int fd) {
    std::lock_guard lock(mutex_);
    std::set<uint32_t>& live = files_[fd];
    uint32_t h = 0;  // the lowest free one, as xa_alloc hands them out
    while (live.count(h) != 0) ++h;
    live.insert(h);
    ++created_;
    return h;
  }
  long Destroy(int fd, uint32_t handle) {
    std::lock_guard lock(mutex_);
    if (files_[fd].erase(handle) == 0) {
      ++unknown_destroys_;
      return -ENOENT;
    }
    ++destroyed_;
    return 0;
  }

  std::mutex mutex_;
  std::map<int, std::set<uint32_t>> files_;
  std::atomic<uint64_t> created_{0}, destroyed_{0}, unknown_destroys_{0};
};

}  // namespace

extern "C" int ioctl(int fd, unsigned long request, ...) {
  // The program's own ioctl and write: the library's host calls on registered fds reach the
  // fake, every other call the real system call.
  va_list args;
  va_start(args, request);
  void* const arg = va_arg(args, void*);
  va_end(args);
  FakeUverbs& fake = FakeUverbs::Get();
  const long r = request == RDMA_VERBS_IOCTL && fake.Knows(fd)
                     ? rxp::abi::testing::AsLibcResult(fake.Ioctl(fd, arg))
                     : syscall(SYS_ioctl, fd, request, arg);
  return static_cast<int>(r);
}

extern "C" ssize_t write(int fd, const void* buffer, size_t length) {
  if (!FakeUverbs::Get().Knows(fd)) return syscall(SYS_write, fd, buffer, length);
  return rxp::abi::testing::AsLibcResult(FakeUverbs::Get().Write(buffer, length));
}

namespace {

// ---- the app ---------------------------------------------------------------------------

// One thread's app memory: a private region at an app address of its own, reached only
// through the callbacks (so two threads never share a command buffer).
struct ThreadApp {
  uint64_t base;
  std::vector<unsigned char> bytes = std::vector<unsigned char>(8192);

  static ThreadApp& Of(void* app) { return *static_cast<ThreadApp*>(app); }
  unsigned char* At(uint64_t a, uint64_t n) {
    if (a < base || n > bytes.size() || a - base > bytes.size() - n) return nullptr;
    return bytes.data() + (a - base);
  }
};

int ReadMemory(void* app, uint64_t address, void* buffer, size_t length) {
  unsigned char* p = ThreadApp::Of(app).At(address, length);
  if (p == nullptr) return -EFAULT;
  std::memcpy(buffer, p, length);
  return 0;
}
int WriteMemory(void* app, uint64_t address, const void* buffer, size_t length) {
  unsigned char* p = ThreadApp::Of(app).At(address, length);
  if (p == nullptr) return -EFAULT;
  std::memcpy(p, buffer, length);
  return 0;
}
int HostAddress(void* app, uint64_t address, uint64_t length, uint64_t* host) {
  unsigned char* p = ThreadApp::Of(app).At(address, length);
  if (p == nullptr) return -EFAULT;
  *host = reinterpret_cast<uint64_t>(p);
  return 0;
}
int ResolveFd(void*, int, rxp_fd_target*) { return -EBADF; }
int InstallFd(void*, rxp_file*) { return -EMFILE; }

const rxp_app_ops kOps{sizeof(rxp_app_ops), ReadMemory, WriteMemory, HostAddress, ResolveFd,
                       InstallFd};
constexpr uint32_t kDriver = RDMA_DRIVER_RXE;

struct Sentry {
  rxp_sentry* sentry = nullptr;
  explicit Sentry(const char* quota = nullptr, uint64_t value = 0) {
    rxp_config* c = nullptr;
    REQUIRE(rxp_config_create(&c) == 0);
    REQUIRE(rxp_config_set_app_ops(c, &kOps) == 0);
    REQUIRE(rxp_config_add_device(c, "uverbs0", "/dev/null", kDriver) == 0);
    // Refusals are expected in some tests; keep their lines out of the test output.
    REQUIRE(rxp_config_set_log(c, [](void*, const char*) {}, nullptr) == 0);
    if (quota != nullptr) REQUIRE(rxp_config_set_quota(c, quota, value) == 0);
    REQUIRE(rxp_sentry_create(c, &sentry) == 0);
    REQUIRE(rxp_config_destroy(c) == 0);
  }
  ~Sentry() {
    if (sentry != nullptr) rxp_sentry_destroy(sentry);
  }
  rxp_file* Open() {
    rxp_file* f = nullptr;
    REQUIRE(rxp_open(sentry, "/dev/infiniband/uverbs0", O_RDWR, &f) == 0);
    FakeUverbs::Get().Register(rxp_file_host_fd(f));
    return f;
  }
  rxp_stats Stats() {
    rxp_stats s{};
    REQUIRE(rxp_sentry_stats(sentry, &s) == 0);
    return s;
  }
};

uint32_t U32At(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The commands, issued from `app`'s memory. Return the C API's result; no REQUIRE here, since
// Catch2's assertions are not thread-safe: threads count failures, the main thread checks.
long GetContext(rxp_file* f, ThreadApp& app) {
  ib_uverbs_get_context cmd{};
  cmd.response = app.base + 4096;
  const auto buf = rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_GET_CONTEXT, cmd, {},
                                                  sizeof(ib_uverbs_get_context_resp) / 4);
  std::memcpy(app.bytes.data(), buf.data(), buf.size());
  return rxp_write(f, &app, app.base, buf.size());
}
long Issue(rxp_file* f, ThreadApp& app, const IoctlBuilder& b) {
  const auto bytes = b.Build();
  std::memcpy(app.bytes.data(), bytes.data(), bytes.size());
  return rxp_ioctl(f, &app, RDMA_VERBS_IOCTL, app.base);
}
// ALLOC_PD; the new handle in *pd.
long AllocPd(rxp_file* f, ThreadApp& app, uint32_t* pd) {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, kDriver);
  b.Inline(UVERBS_ATTR_CORE_IN, 0, 8)
      .Pointer(UVERBS_ATTR_CORE_OUT, app.base + 4096, sizeof(ib_uverbs_alloc_pd_resp))
      .Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8);
  const long r = Issue(f, app, b);
  if (r >= 0) *pd = U32At(app.bytes.data() + 4096);
  return r;
}
long DestroyPd(rxp_file* f, ThreadApp& app, uint32_t pd) {
  IoctlBuilder b(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, kDriver);
  b.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, pd);
  return Issue(f, app, b);
}
long QueryPort(rxp_file* f, ThreadApp& app) {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, kDriver);
  b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
      .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, app.base + 4096,
               sizeof(ib_uverbs_query_port_resp_ex));
  return Issue(f, app, b);
}

uint64_t AppBase(int thread) { return 0x7100'0000'0000 + uint64_t(thread) * 0x10'0000; }

constexpr int kThreads = 4;
constexpr int kRounds = 500;

}  // namespace

TEST_CASE("files of one sentry run commands in parallel threads") {
  Sentry s;
  const uint64_t created_before = FakeUverbs::Get().created();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ThreadApp app{AppBase(t)};
      rxp_file* f = nullptr;
      if (rxp_open(s.sentry, "/dev/infiniband/uverbs0", O_RDWR, &f) != 0) {
        ++failures;
        return;
      }
      FakeUverbs::Get().Register(rxp_file_host_fd(f));
      if (GetContext(f, app) < 0) ++failures;
      for (int i = 0; i < kRounds; ++i) {
        uint32_t pd = ~0u;
        if (AllocPd(f, app, &pd) < 0 || QueryPort(f, app) < 0 || DestroyPd(f, app, pd) < 0)
          ++failures;
      }
      if (rxp_close(f) != 0) ++failures;
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(FakeUverbs::Get().created() - created_before == uint64_t{kThreads} * kRounds);
  CHECK(FakeUverbs::Get().unknown_destroys() == 0);
  const rxp_stats st = s.Stats();
  // GET_CONTEXT, then three commands a round, per thread: every one forwarded, none refused.
  CHECK(st.forwarded == uint64_t{kThreads} * (1 + 3 * kRounds));
  CHECK(st.refused_state == 0);
  CHECK(st.kernel_errors == 0);
}

TEST_CASE("threads sharing one file each get their own objects") {
  Sentry s("pds", kThreads);  // at most one PD per thread at a time, summed over the threads
  rxp_file* f = s.Open();
  {
    ThreadApp app{AppBase(kThreads)};
    REQUIRE(GetContext(f, app) >= 0);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ThreadApp app{AppBase(t)};
      for (int i = 0; i < kRounds; ++i) {
        uint32_t pd = ~0u;
        // The quota holds exactly one PD per thread: a lost release or a double count in the
        // shared accounting shows up as EDQUOT here.
        if (AllocPd(f, app, &pd) < 0 || DestroyPd(f, app, pd) < 0) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(FakeUverbs::Get().unknown_destroys() == 0);
  CHECK(s.Stats().refused_quota == 0);
  CHECK(rxp_close(f) == 0);
}

TEST_CASE("a file closed while other threads use it: EBADF from then on, objects released") {
  Sentry s("pds", 64);
  std::atomic<uint64_t> succeeded{0}, refused{0};
  for (int attempt = 0; attempt < 20; ++attempt) {
    rxp_file* f = s.Open();
    {
      ThreadApp app{AppBase(kThreads)};
      REQUIRE(GetContext(f, app) >= 0);
    }
    std::atomic<bool> go{false};
    std::atomic<int> bad_results{0}, after_close_ok{0};
    std::atomic<bool> closed{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ThreadApp app{AppBase(t)};
        while (!go) std::this_thread::yield();
        // Until the close, and a few rounds after it.
        for (int after = 0; after < 20; after += closed.load() ? 1 : 0) {
          const bool was_closed = closed.load();
          uint32_t pd = ~0u;
          const long a = AllocPd(f, app, &pd);
          // While the handle lives, a command succeeds; once it is closed, EBADF. Nothing
          // else, whatever the interleaving.
          if (a < 0 && a != -EBADF) ++bad_results;
          if (a >= 0 && was_closed) ++after_close_ok;
          ++(a >= 0 ? succeeded : refused);
          if (a >= 0) {
            const long d = DestroyPd(f, app, pd);
            if (d < 0 && d != -EBADF) ++bad_results;
          }
          rxp_file* copy = nullptr;
          const int dup = rxp_file_dup(f, &copy);
          if (dup == 0) {
            rxp_close(copy);
          } else if (dup != -EBADF) {
            ++bad_results;
          }
        }
      });
    go = true;
    std::this_thread::sleep_for(std::chrono::microseconds(100 + 100 * attempt));
    CHECK(rxp_close(f) == 0);
    closed = true;
    for (auto& t : threads) t.join();
    CHECK(bad_results == 0);
    CHECK(after_close_ok == 0);
    CHECK(rxp_close(f) == -EBADF);
  }
  // The close did land among the threads' commands: some ran before it, some after.
  CHECK(succeeded > 0);
  CHECK(refused > 0);
  // Every PD the threads left behind (allocated, then the destroy got EBADF) went with its
  // file: the quota of 64 is whole again.
  rxp_file* f = s.Open();
  ThreadApp app{AppBase(0)};
  REQUIRE(GetContext(f, app) >= 0);
  std::vector<uint32_t> pds;
  for (int i = 0; i < 64; ++i) {
    uint32_t pd = ~0u;
    REQUIRE(AllocPd(f, app, &pd) >= 0);
    pds.push_back(pd);
  }
  uint32_t over = ~0u;
  CHECK(AllocPd(f, app, &over) == -EDQUOT);
  CHECK(rxp_close(f) == 0);
}

TEST_CASE("a sentry handle destroyed while its files run commands") {
  std::atomic<int> failures{0};
  Sentry s;
  std::vector<rxp_file*> files;
  for (int t = 0; t < kThreads; ++t) files.push_back(s.Open());
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ThreadApp app{AppBase(t)};
      rxp_file* f = files[static_cast<size_t>(t)];
      while (!go) std::this_thread::yield();
      if (GetContext(f, app) < 0) ++failures;
      for (int i = 0; i < 300; ++i) {
        uint32_t pd = ~0u;
        if (AllocPd(f, app, &pd) < 0 || DestroyPd(f, app, pd) < 0) ++failures;
      }
    });
  go = true;
  // The files keep what they need (docs/embedding.md): their commands go on succeeding.
  rxp_sentry* handle = std::exchange(s.sentry, nullptr);
  CHECK(rxp_sentry_destroy(handle) == 0);
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  rxp_stats st{};
  CHECK(rxp_sentry_stats(handle, &st) == -EINVAL);
  for (rxp_file* f : files) CHECK(rxp_close(f) == 0);
}
