// The C API's error paths: every entry point with a bad handle, a bad config and a closed
// file returns the documented -errno and a reason, and never crashes. The "device" here is
// /dev/null standing in for a host uverbs file: these tests check the C boundary, not the
// kernel (the mini-sentry VM test does that).
#include "rdmaproxy/rdmaproxy.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <poll.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "rdmaproxy/c_api_internal.h"  // the config a policy leaves, read back

extern "C" int rxp_c_header_smoke(void);  // c_api_header_test.c: the header compiles as C

namespace {

// App memory: one region at a fake app address, reached only through the callbacks.
struct FakeApp {
  static constexpr uint64_t kBase = 0x7000'0000'0000;
  std::vector<unsigned char> bytes = std::vector<unsigned char>(4096);
  std::vector<rxp_file*> installed;

  static FakeApp& Of(void* app) { return *static_cast<FakeApp*>(app); }
  bool Inside(uint64_t a, uint64_t n) const {
    return a >= kBase && n <= bytes.size() && a - kBase <= bytes.size() - n;
  }
};

int ReadMemory(void* app, uint64_t address, void* buffer, size_t length) {
  FakeApp& a = FakeApp::Of(app);
  if (!a.Inside(address, length)) return -EFAULT;
  std::memcpy(buffer, a.bytes.data() + (address - FakeApp::kBase), length);
  return 0;
}
int WriteMemory(void* app, uint64_t address, const void* buffer, size_t length) {
  FakeApp& a = FakeApp::Of(app);
  if (!a.Inside(address, length)) return -EFAULT;
  std::memcpy(a.bytes.data() + (address - FakeApp::kBase), buffer, length);
  return 0;
}
int HostAddress(void* app, uint64_t address, uint64_t length, uint64_t* host) {
  FakeApp& a = FakeApp::Of(app);
  if (!a.Inside(address, length)) return -EFAULT;
  *host = reinterpret_cast<uint64_t>(a.bytes.data()) + (address - FakeApp::kBase);
  return 0;
}
int ResolveFd(void*, int, rxp_fd_target*) { return -EBADF; }
int InstallFd(void* app, rxp_file* file) {
  FakeApp::Of(app).installed.push_back(file);
  return 100;
}

const rxp_app_ops kOps{sizeof(rxp_app_ops), ReadMemory, WriteMemory, HostAddress, ResolveFd,
                       InstallFd};

// Handles that were never handed out: NULL, a small integer, a pointer to real memory.
std::vector<uint64_t> BogusTokens() {
  static int on_stack_like = 0;
  return {0, 0x1234, reinterpret_cast<uint64_t>(&on_stack_like)};
}
template <typename T>
T* As(uint64_t token) {
  return reinterpret_cast<T*>(token);
}

std::string LastError() { return rxp_last_error(); }

// A config with the fake app and /dev/null as uverbs0, an rxe device (driver id given: no
// netlink needed; rxe's mmap rules apply).
rxp_config* MakeConfig(std::vector<std::string>* log = nullptr) {
  rxp_config* c = nullptr;
  REQUIRE(rxp_config_create(&c) == 0);
  REQUIRE(rxp_config_set_app_ops(c, &kOps) == 0);
  REQUIRE(rxp_config_add_device(c, "uverbs0", "/dev/null", RDMA_DRIVER_RXE) == 0);
  if (log != nullptr)
    REQUIRE(rxp_config_set_log(
                c, [](void* ctx, const char* line) {
                  static_cast<std::vector<std::string>*>(ctx)->push_back(line);
                },
                log) == 0);
  return c;
}

}  // namespace

TEST_CASE("the header compiles and works as C") { CHECK(rxp_c_header_smoke() == 0); }

TEST_CASE("config entry points reject bad handles with EINVAL") {
  rxp_app_ops ops = kOps;
  for (uint64_t t : BogusTokens()) {
    rxp_config* c = As<rxp_config>(t);
    CHECK(rxp_config_destroy(c) == -EINVAL);
    CHECK(LastError().find("rxp_config") != std::string::npos);
    CHECK(rxp_config_set_app_ops(c, &ops) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_select_devices(c, "") == -EINVAL);
    CHECK(rxp_config_set_rdma_cm(c, 1) == -EINVAL);
    CHECK(rxp_config_set_rdma_cm_netns(c, "/proc/self/ns/net") == -EINVAL);
    CHECK(rxp_config_set_policy_json(c, R"({"version": 1})") == -EINVAL);
    CHECK(rxp_config_load_policy(c, "/nonexistent") == -EINVAL);
    CHECK(rxp_config_set_quota(c, "qps", 1) == -EINVAL);
    CHECK(rxp_config_set_log(c, nullptr, nullptr) == -EINVAL);
    CHECK(rxp_config_set_trace(c, nullptr, nullptr) == -EINVAL);
    rxp_sentry* s = nullptr;
    CHECK(rxp_sentry_create(c, &s) == -EINVAL);
    CHECK(s == nullptr);
  }
  CHECK(rxp_config_create(nullptr) == -EINVAL);
}

TEST_CASE("a destroyed config is a bad handle") {
  rxp_config* c = MakeConfig();
  REQUIRE(rxp_config_destroy(c) == 0);
  CHECK(rxp_config_destroy(c) == -EINVAL);
  CHECK(rxp_config_set_quota(c, "qps", 1) == -EINVAL);
  rxp_sentry* s = nullptr;
  CHECK(rxp_sentry_create(c, &s) == -EINVAL);
}

TEST_CASE("bad config values are refused with a reason") {
  rxp_config* c = nullptr;
  REQUIRE(rxp_config_create(&c) == 0);

  SECTION("app ops") {
    CHECK(rxp_config_set_app_ops(c, nullptr) == -EINVAL);
    rxp_app_ops small = kOps;
    small.size = sizeof(rxp_app_ops) - 1;
    CHECK(rxp_config_set_app_ops(c, &small) == -EINVAL);
    rxp_app_ops partial = kOps;
    partial.host_address = nullptr;
    CHECK(rxp_config_set_app_ops(c, &partial) == -EINVAL);
    CHECK(LastError().find("callback") != std::string::npos);
    rxp_sentry* s = nullptr;
    CHECK(rxp_sentry_create(c, &s) == -EINVAL);  // still no ops
    CHECK(LastError().find("rxp_app_ops") != std::string::npos);
  }
  SECTION("devices") {
    CHECK(rxp_config_add_device(c, nullptr, "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", nullptr, 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "a/b", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "rdma_cm", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, ".", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "..", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs\n0", "/dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", "dev/null", 0) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/null", -2) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/null", int64_t{1} << 40) == -EINVAL);
    CHECK(rxp_config_add_device(c, "uverbs0", "/nonexistent/uverbs9", -1) == -ENOENT);
    // /dev/null is a character device, but no RDMA device's.
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/null", -1) == -ENODEV);
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/null", 0) == 0);
    CHECK(rxp_config_add_device(c, "uverbs0", "/dev/zero", 0) == -EEXIST);
    CHECK(rxp_config_select_devices(c, nullptr) == -EINVAL);
    CHECK(rxp_config_select_devices(c, "no_such_device_9") == -ENODEV);
    CHECK(LastError().find("no_such_device_9") != std::string::npos);
  }
  SECTION("rdma_cm network namespace") {
    CHECK(rxp_config_set_rdma_cm_netns(c, "proc/self/ns/net") == -EINVAL);
    CHECK(LastError().find("not absolute") != std::string::npos);
    REQUIRE(rxp_config_set_app_ops(c, &kOps) == 0);
    rxp_sentry* s = nullptr;
    // Checked when the sentry starts: no such file; a file that is no namespace; a namespace
    // of another kind.
    CHECK(rxp_config_set_rdma_cm_netns(c, "/nonexistent/ns/net") == 0);
    CHECK(rxp_sentry_create(c, &s) == -ENOENT);
    CHECK(LastError().find("/nonexistent/ns/net") != std::string::npos);
    CHECK(rxp_config_set_rdma_cm_netns(c, "/dev/null") == 0);
    CHECK(rxp_sentry_create(c, &s) == -EINVAL);
    CHECK(LastError().find("setns") != std::string::npos);
    CHECK(rxp_config_set_rdma_cm_netns(c, "/proc/self/ns/uts") == 0);
    CHECK(rxp_sentry_create(c, &s) == -EINVAL);
    CHECK(s == nullptr);
    // A FIFO is refused at once, not waited on for a writer.
    const std::string fifo = "/tmp/rxp-capi-fifo-" + std::to_string(::getpid());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(rxp_config_set_rdma_cm_netns(c, fifo.c_str()) == 0);
    CHECK(rxp_sentry_create(c, &s) == -EINVAL);
    ::unlink(fifo.c_str());
    // Not asked for when rdma_cm is not served.
    REQUIRE(rxp_config_set_rdma_cm(c, 0) == 0);
    CHECK(rxp_sentry_create(c, &s) == 0);
    CHECK(rxp_sentry_destroy(s) == 0);
    REQUIRE(rxp_config_set_rdma_cm(c, 1) == 0);
    // NULL and "" go back to the caller's namespace.
    CHECK(rxp_config_set_rdma_cm_netns(c, nullptr) == 0);
    s = nullptr;
    CHECK(rxp_sentry_create(c, &s) == 0);
    CHECK(rxp_sentry_destroy(s) == 0);
    CHECK(rxp_config_set_rdma_cm_netns(c, "") == 0);
  }
  SECTION("policy and quotas") {
    CHECK(rxp_config_set_policy_json(c, nullptr) == -EINVAL);
    CHECK(rxp_config_set_policy_json(c, "{") == -EINVAL);
    CHECK(rxp_config_set_policy_json(c, R"({"version": 1, "deny": ["NO.SUCH"]})") == -EINVAL);
    CHECK(rxp_config_load_policy(c, nullptr) == -EINVAL);
    CHECK(rxp_config_load_policy(c, "/nonexistent/policy.json") == -ENOENT);
    // Not a regular file: refused at once (a FIFO is not waited on, /dev/zero not read on).
    const std::string fifo = "/tmp/rxp-capi-policy-fifo-" + std::to_string(::getpid());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(rxp_config_load_policy(c, fifo.c_str()) == -EINVAL);
    CHECK(LastError().find("not a regular file") != std::string::npos);
    ::unlink(fifo.c_str());
    CHECK(rxp_config_load_policy(c, "/dev/zero") == -EINVAL);
    CHECK(rxp_config_load_policy(c, "/tmp") == -EISDIR);
    CHECK(rxp_config_set_quota(c, nullptr, 1) == -EINVAL);
    CHECK(rxp_config_set_quota(c, "bogus", 1) == -EINVAL);
    CHECK(LastError().find("bogus") != std::string::npos);
    CHECK(rxp_config_set_quota(c, "qps", uint64_t{1} << 33) == -EINVAL);
    CHECK(rxp_config_set_quota(c, "qps", 4) == 0);
    CHECK(rxp_config_set_quota(c, "pinned_bytes", uint64_t{1} << 40) == 0);
    CHECK(rxp_config_set_policy_json(c, R"({"version": 1})") == 0);
  }
  rxp_config_destroy(c);
}

TEST_CASE("a policy replaces the one before it, its quotas too, but not quotas set one by one") {
  rxp_config* c = MakeConfig();
  auto quotas = [&] { return rxp::proxy::capi::ConfigOf(c)->config.policy.quotas; };
  REQUIRE(rxp_config_set_policy_json(c, R"({"version": 1, "quotas": {"pds": 0, "cqs": 3}})") == 0);
  CHECK(quotas().pds == 0u);
  CHECK(quotas().cqs == 3u);
  REQUIRE(rxp_config_set_policy_json(c, R"({"version": 1})") == 0);
  CHECK(!quotas().pds);
  CHECK(!quotas().cqs);
  // Set one by one: kept over a policy set after, and over the policy set before.
  REQUIRE(rxp_config_set_quota(c, "qps", 4) == 0);
  REQUIRE(rxp_config_set_policy_json(c, R"({"version": 1, "quotas": {"qps": 9, "mrs": 2}})") == 0);
  CHECK(quotas().qps == 4u);
  CHECK(quotas().mrs == 2u);
  REQUIRE(rxp_config_set_quota(c, "mrs", 5) == 0);
  CHECK(quotas().mrs == 5u);
  rxp_config_destroy(c);
}

TEST_CASE("sentry entry points reject bad handles with EINVAL") {
  for (uint64_t t : BogusTokens()) {
    rxp_sentry* s = As<rxp_sentry>(t);
    CHECK(rxp_sentry_destroy(s) == -EINVAL);
    rxp_stats stats{};
    CHECK(rxp_sentry_stats(s, &stats) == -EINVAL);
    rxp_file* f = nullptr;
    CHECK(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, &f) == -EINVAL);
    CHECK(f == nullptr);
    CHECK(LastError().find("rxp_sentry") != std::string::npos);
  }
  rxp_config* c = MakeConfig();
  CHECK(rxp_sentry_create(c, nullptr) == -EINVAL);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  CHECK(rxp_sentry_stats(s, nullptr) == -EINVAL);
  rxp_file* f = nullptr;
  CHECK(rxp_open(s, nullptr, O_RDWR, &f) == -EINVAL);
  CHECK(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, nullptr) == -EINVAL);
  REQUIRE(rxp_sentry_destroy(s) == 0);
  CHECK(rxp_sentry_destroy(s) == -EINVAL);
  CHECK(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, &f) == -EINVAL);
  rxp_config_destroy(c);
}

TEST_CASE("a sentry lists its devices with the host node's number") {
  rxp_config* c = MakeConfig();
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_device_info info{};
  REQUIRE(rxp_sentry_device(s, 0, &info) == 0);
  CHECK(std::string(info.sandbox_name) == "uverbs0");
  CHECK(std::string(info.host_path) == "/dev/null");
  CHECK(std::string(info.ibdev).empty());  // driver id given: the host's netlink not asked
  CHECK(info.driver_id == RDMA_DRIVER_RXE);
  CHECK(info.dev_major == 1);  // /dev/null is 1:3 on Linux
  CHECK(info.dev_minor == 3);
  CHECK(rxp_sentry_device(s, 1, &info) == -ENOENT);
  CHECK(rxp_sentry_device(s, 0, nullptr) == -EINVAL);
  {
    // A device whose host node is gone, or is no device node, is not the end of the list.
    rxp_config* c2 = MakeConfig();
    REQUIRE(rxp_config_add_device(c2, "uverbs1", "/nonexistent/uverbs9", RDMA_DRIVER_RXE) == 0);
    REQUIRE(rxp_config_add_device(c2, "uverbs2", "/tmp", RDMA_DRIVER_RXE) == 0);
    rxp_sentry* s2 = nullptr;
    REQUIRE(rxp_sentry_create(c2, &s2) == 0);
    CHECK(rxp_sentry_device(s2, 1, &info) == -ENODEV);
    CHECK(LastError().find("/nonexistent/uverbs9") != std::string::npos);
    CHECK(rxp_sentry_device(s2, 2, &info) == -ENODEV);
    CHECK(rxp_sentry_device(s2, 3, &info) == -ENOENT);
    rxp_sentry_destroy(s2);
    rxp_config_destroy(c2);
  }
  std::string long_name(64, 'u');
  CHECK(rxp_config_add_device(c, long_name.c_str(), "/dev/null", 0) == -ENAMETOOLONG);
  std::string long_path = "/" + std::string(255, 'd');
  CHECK(rxp_config_add_device(c, "uverbs1", long_path.c_str(), 0) == -ENAMETOOLONG);
  REQUIRE(rxp_sentry_destroy(s) == 0);
  REQUIRE(rxp_config_destroy(c) == 0);
}

TEST_CASE("open answers ENOENT for what the sandbox does not have") {
  std::vector<std::string> log;
  rxp_config* c = MakeConfig(&log);
  REQUIRE(rxp_config_set_rdma_cm(c, 0) == 0);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_file* f = nullptr;
  for (const char* path : {"/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm",
                           "/dev/infiniband/", "/dev/null", "uverbs0",
                           "/dev/infiniband/uverbs0/x"}) {
    CHECK(rxp_open(s, path, O_RDWR, &f) == -ENOENT);
    CHECK(LastError().find("ENOENT") != std::string::npos);
  }
  CHECK(log.size() == 6);

  // What the app names stays on one line, in the log and in the reason: a newline in it
  // cannot forge a second log line.
  const char* forged = "/dev/infiniband/x\nrdmaproxy: uverbs0: forged\x1b[2K";
  CHECK(rxp_open(s, forged, O_RDWR, &f) == -ENOENT);
  REQUIRE(log.size() == 7);
  CHECK(log.back().find('\n') == std::string::npos);
  CHECK(log.back().find('\x1b') == std::string::npos);
  CHECK(log.back().find("x\\x0ardmaproxy: uverbs0: forged\\x1b[2K") != std::string::npos);
  CHECK(LastError().find('\n') == std::string::npos);
  CHECK(LastError().find("x\\x0ardmaproxy") != std::string::npos);
  rxp_sentry_destroy(s);
  rxp_config_destroy(c);
}

// Flags that fail natively on a character device, or give an fd no command can pass through,
// fail as open(2) fails them, after the check that the device exists.
TEST_CASE("open refuses flags a character device does not take") {
  std::vector<std::string> log;
  rxp_config* c = MakeConfig(&log);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_file* f = nullptr;
  const char* dev = "/dev/infiniband/uverbs0";
  CHECK(rxp_open(s, dev, O_RDWR | O_DIRECTORY, &f) == -ENOTDIR);
  CHECK(rxp_open(s, "/dev/infiniband/rdma_cm", O_RDONLY | O_DIRECTORY, &f) == -ENOTDIR);
  CHECK(rxp_open(s, dev, O_RDWR | O_CREAT | O_EXCL, &f) == -EEXIST);
  CHECK(rxp_open(s, dev, O_PATH, &f) == -EINVAL);
  CHECK(LastError().find("O_PATH") != std::string::npos);
  CHECK(rxp_open(s, "/dev/infiniband/uverbs9", O_RDWR | O_DIRECTORY, &f) == -ENOENT);
  CHECK(log.size() == 5);
  REQUIRE(rxp_open(s, dev, O_RDWR | O_CLOEXEC | O_CREAT, &f) == 0);
  rxp_close(f);
  rxp_sentry_destroy(s);
  rxp_config_destroy(c);
}

TEST_CASE("file entry points reject bad and closed handles with EBADF") {
  rxp_config* c = MakeConfig();
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_file* open_then_closed = nullptr;
  REQUIRE(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, &open_then_closed) == 0);
  REQUIRE(rxp_close(open_then_closed) == 0);

  std::vector<uint64_t> tokens = BogusTokens();
  tokens.push_back(reinterpret_cast<uint64_t>(open_then_closed));
  FakeApp app;
  for (uint64_t t : tokens) {
    rxp_file* f = As<rxp_file>(t);
    rxp_file* copy = nullptr;
    short revents = 0;
    void* at = nullptr;
    int host_fd = -1;
    CHECK(rxp_file_dup(f, &copy) == -EBADF);
    CHECK(copy == nullptr);
    CHECK(rxp_close(f) == -EBADF);
    CHECK(rxp_file_kind(f) == -EBADF);
    CHECK(rxp_file_host_fd(f) == -EBADF);
    CHECK(rxp_ioctl(f, &app, RDMA_VERBS_IOCTL, FakeApp::kBase) == -EBADF);
    CHECK(rxp_write(f, &app, FakeApp::kBase, 24) == -EBADF);
    CHECK(rxp_read(f, &app, FakeApp::kBase, 16) == -EBADF);
    CHECK(rxp_poll(f, POLLIN, &revents) == -EBADF);
    CHECK(rxp_set_nonblocking(f, 1) == -EBADF);
    CHECK(rxp_mmap(f, 4096, PROT_READ, MAP_SHARED, 0, &at) == -EBADF);
    CHECK(rxp_mmap_prepare(f, 0, 4096, PROT_READ, &host_fd) == -EBADF);
    CHECK(rxp_mmap_commit(f, 0) == -EBADF);
    CHECK(LastError().find("rxp_file") != std::string::npos);
  }
  rxp_sentry_destroy(s);
  rxp_config_destroy(c);
}

// The header allows a callback 0 or -errno only: anything else (a positive count, a number past
// the errno range) is a failure, never taken as success with bytes the callback did not copy;
// the command then fails with EFAULT, as the kernel's copy_from_user() would.
TEST_CASE("a memory callback's result other than 0 or -errno fails the command") {
  static int result = 0;
  rxp_app_ops ops = kOps;
  ops.read_memory = [](void*, uint64_t, void*, size_t) { return result; };
  rxp_config* c = MakeConfig();
  REQUIRE(rxp_config_set_app_ops(c, &ops) == 0);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_file* f = nullptr;
  REQUIRE(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, &f) == 0);
  FakeApp app;
  for (const auto& [r, err] : {std::pair{7, EFAULT}, std::pair{-5000, EFAULT},
                               std::pair{INT_MIN, EFAULT}, std::pair{-EIO, EFAULT}}) {
    result = r;
    CHECK(rxp_write(f, &app, FakeApp::kBase, 16) == -err);
    CHECK(rxp_ioctl(f, &app, RDMA_VERBS_IOCTL, FakeApp::kBase) == -err);
    CHECK(LastError().find("cannot be read") != std::string::npos);
  }
  rxp_stats stats{};
  REQUIRE(rxp_sentry_stats(s, &stats) == 0);
  CHECK(stats.forwarded == 0);
  REQUIRE(rxp_close(f) == 0);
  REQUIRE(rxp_sentry_destroy(s) == 0);
  rxp_config_destroy(c);
}

TEST_CASE("an open file: refusals come back as -errno with the reason, nothing forwarded") {
  std::vector<std::string> log;
  rxp_config* c = MakeConfig(&log);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  rxp_file* f = nullptr;
  REQUIRE(rxp_open(s, "/dev/infiniband/uverbs0", O_RDWR, &f) == 0);
  CHECK(rxp_file_kind(f) == RXP_FILE_UVERBS);
  CHECK(rxp_file_host_fd(f) >= 0);
  CHECK(LastError().empty());
  FakeApp app;

  // Not RDMA_VERBS_IOCTL: ENOTTY, as ib_uverbs_ioctl answers.
  CHECK(rxp_ioctl(f, &app, 0x5401 /* TCGETS */, FakeApp::kBase) == -ENOTTY);
  CHECK(LastError().find("ENOTTY") != std::string::npos);
  // The header lies outside app memory: EFAULT.
  CHECK(rxp_ioctl(f, &app, RDMA_VERBS_IOCTL, 0x10) == -EFAULT);
  CHECK(LastError().find("EFAULT") != std::string::npos);
  // A header whose length disagrees with num_attrs: EINVAL from the decoder.
  ib_uverbs_ioctl_hdr h{};
  h.length = 4000;
  h.num_attrs = 1;
  std::memcpy(app.bytes.data(), &h, sizeof(h));
  CHECK(rxp_ioctl(f, &app, RDMA_VERBS_IOCTL, FakeApp::kBase) == -EINVAL);
  // A legacy write shorter than its header: EINVAL.
  CHECK(rxp_write(f, &app, FakeApp::kBase, 3) == -EINVAL);
  // uverbs files have no read; no offset was handed out for mmap; only MAP_SHARED.
  CHECK(rxp_read(f, &app, FakeApp::kBase, 16) == -EINVAL);
  // A file not opened for writing (reading) is EBADF whatever the bytes, as vfs_write()
  // (vfs_read()) answers before the file's own operation: before the decoder's EINVAL.
  for (const int mode : {O_RDONLY, O_WRONLY, O_ACCMODE}) {
    rxp_file* limited = nullptr;
    REQUIRE(rxp_open(s, "/dev/infiniband/uverbs0", mode, &limited) == 0);
    std::memset(app.bytes.data(), 0, 16);
    CHECK(rxp_write(limited, &app, FakeApp::kBase, 16) == (mode == O_WRONLY ? -EINVAL : -EBADF));
    if (mode != O_WRONLY) CHECK(LastError().find("write of a file opened") != std::string::npos);
    CHECK(rxp_read(limited, &app, FakeApp::kBase, 16) == (mode == O_RDONLY ? -EINVAL : -EBADF));
    if (mode != O_RDONLY) CHECK(LastError().find("read of a file opened") != std::string::npos);
    CHECK(rxp_close(limited) == 0);
  }
  rxp_stats limited_stats{};
  REQUIRE(rxp_sentry_stats(s, &limited_stats) == 0);
  CHECK(limited_stats.refused_state == 4);  // two writes, two reads: state refusals
  CHECK(limited_stats.forwarded == 0);
  void* at = nullptr;
  int host_fd = -1;
  CHECK(rxp_mmap(f, 4096, PROT_READ, MAP_PRIVATE, 0, &at) == -EINVAL);
  CHECK(rxp_mmap(f, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, 0, &at) == -EINVAL);
  CHECK(LastError().find("MAP_FIXED") != std::string::npos);
  CHECK(rxp_mmap_prepare(f, 0, 0, PROT_READ, &host_fd) == -EINVAL);
  CHECK(LastError().find("length 0") != std::string::npos);
  CHECK(rxp_mmap(f, 4096, PROT_READ, MAP_SHARED, 0x1000, &at) == -EINVAL);
  CHECK(LastError().find("rxe mmap offset") != std::string::npos);
  CHECK(rxp_mmap(f, 4096, PROT_READ, MAP_SHARED, 0x1000, nullptr) == -EINVAL);
  CHECK(rxp_mmap_prepare(f, 0x1000, 4096, PROT_READ, &host_fd) == -EINVAL);
  CHECK(rxp_mmap_prepare(f, 0x1000, 4096, PROT_READ, nullptr) == -EINVAL);
  // A commit must follow a prepare that passed: nothing was prepared here.
  CHECK(rxp_mmap_commit(f, 0x1000) == -EINVAL);
  CHECK(LastError().find("was not checked") != std::string::npos);
  short revents = 0;
  CHECK(rxp_poll(f, POLLIN, nullptr) == -EINVAL);
  CHECK(rxp_poll(f, POLLIN, &revents) == 0);
  CHECK(rxp_set_nonblocking(f, 1) == 0);
  CHECK(fcntl(rxp_file_host_fd(f), F_GETFL) & O_NONBLOCK);

  rxp_stats stats{};
  REQUIRE(rxp_sentry_stats(s, &stats) == 0);
  CHECK(stats.forwarded == 0);
  CHECK(stats.refused_decode >= 3);
  CHECK(stats.pinned_bytes == 0);
  CHECK(!log.empty());

  // A dup outlives the original handle and the sentry handle; the last close ends the file.
  rxp_file* copy = nullptr;
  REQUIRE(rxp_file_dup(f, &copy) == 0);
  CHECK(rxp_file_dup(f, nullptr) == -EINVAL);
  REQUIRE(rxp_close(f) == 0);
  REQUIRE(rxp_sentry_destroy(s) == 0);
  CHECK(rxp_file_kind(copy) == RXP_FILE_UVERBS);
  CHECK(rxp_ioctl(copy, &app, 0x5401, FakeApp::kBase) == -ENOTTY);
  REQUIRE(rxp_close(copy) == 0);
  CHECK(rxp_close(copy) == -EBADF);
  rxp_config_destroy(c);
}
