// The tracer end to end on this machine: the testee (testdata/testee.cc) runs under the harness
// with a test resolver (sandbox /dev/infiniband/uverbs0 is host /dev/null, a stand-in device)
// and a recording factory.
#include "tools/harness/tracer.h"

#include <signal.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <cctype>
#include <iterator>

#include "tools/harness/harness.h"
#include "tools/harness/path_resolver.h"
#include "tools/harness/testdata/recording_factory.h"
#include "tools/harness/testdata/run_testee.h"

namespace rxp::harness {
namespace {

using testing::RecordingFactory;
using testing::RunTestee;
using testing::TesteeRun;
namespace fs = std::filesystem;

const FdRange kRange = *FdRange::Make(768, 256);

std::vector<PathRule> DeviceRules() {
  using K = Resolution::Kind;
  using M = PathRule::Match;
  return {
      {"/dev/infiniband/uverbs0", M::kExact, K::kRewrite, "/dev/null", 0, true, "uverbs0"},
      {"/dev/infiniband/uverbs1", M::kExact, K::kRewrite, "/dev/zero", 0, true, "uverbs1"},
      {"/dev/infiniband", M::kTree, K::kFail, "", ENOENT, false, "not allowed"},
  };
}

// A temp directory tree the path tests redirect "/rxp-sandbox" into:
//   real/a/file, real/a/deep/, real/b/, real/lnk -> <root>/real/a/deep (absolute)
struct SandboxTree {
  SandboxTree() {
    char templ[] = "/tmp/rxp-harness-test.XXXXXX";
    root = mkdtemp(templ);
    fs::create_directories(root + "/real/a/deep");
    fs::create_directories(root + "/real/b");
    fs::create_directories(root + "/dev-view");
    std::ofstream(root + "/device-file") << "";
    std::ofstream(root + "/real/a/file") << "x";
    fs::create_symlink(root + "/real/a/deep", root + "/real/lnk");
  }
  ~SandboxTree() { fs::remove_all(root); }
  long Ino(const std::string& rel) const {
    struct stat st{};
    return stat((root + "/" + rel).c_str(), &st) == 0 ? static_cast<long>(st.st_ino) : -1;
  }
  std::string root;
};

struct Fixture {
  Fixture() : resolver(Rules()) {
    options.range = kRange;
    options.resolver = &resolver;
    options.factory = &factory;
  }
  std::vector<PathRule> Rules() {
    auto rules = DeviceRules();
    // A proxied "device" that is a plain file, to see what the kernel was handed.
    rules.push_back({"/dev/infiniband/uverbs2", PathRule::Match::kExact,
                     Resolution::Kind::kRewrite, tree.root + "/device-file", 0, true, "uverbs2"});
    rules.push_back({"/rxp-sandbox", PathRule::Match::kTree, Resolution::Kind::kRewrite,
                     tree.root + "/real", 0, false, "test tree"});
    // The device directory itself is a rendered view (as DeviceView makes it).
    rules.push_back({"/dev/infiniband", PathRule::Match::kExact, Resolution::Kind::kRewrite,
                     tree.root + "/dev-view", 0, false, "device directory"});
    return rules;
  }
  SandboxTree tree;
  RuleResolver resolver;
  RecordingFactory factory;
  HarnessOptions options;
};

// The testee run natively, through a shell: its stdout, then "status=" and the shell's $?.
std::string RunNatively(const std::vector<std::string>& args) {
  std::string command = RXP_TESTEE;
  for (const auto& a : args) command += " " + a;
  command += "; echo status=$?";
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (p != nullptr) pclose(p);
  return out;
}

bool InRange(const std::string& value) {
  return kRange.Contains(static_cast<uint64_t>(std::stol(value)));
}

TEST_CASE("exit codes and signals propagate", "[tracer]") {
  CHECK(RunTestee({"exit", "0"}).exit_code() == 0);
  CHECK(RunTestee({"exit", "42"}).exit_code() == 42);
  TesteeRun killed = RunTestee({"raise", std::to_string(SIGTERM)});
  CHECK(killed.term_signal() == SIGTERM);
  CHECK(ExitCodeOf(killed.status) == 128 + SIGTERM);
  CHECK(RunTestee({"raise", std::to_string(SIGKILL)}).term_signal() == SIGKILL);
}

TEST_CASE("a program that cannot start exits 127 or 126, as from a shell", "[tracer]") {
  HarnessOptions options;
  // Named by path, no such file: execve fails with ENOENT in the child.
  options.argv = {"/nonexistent/rxp-no-such-program"};
  auto run = RunHarness(options);
  REQUIRE(run.ok());
  CHECK(ExitCodeOf(run->wait_status) == 127);
  // Not found in PATH: nothing is started.
  options.argv = {"rxp-no-such-program-in-path"};
  auto missing = RunHarness(options);
  REQUIRE(missing.ok());
  CHECK(ExitCodeOf(missing->wait_status) == 127);
  CHECK(missing->stats.seccomp_stops == 0);
  // A file that exists but cannot be executed (no x bit for anyone, so root too gets
  // execve's EACCES).
  char path[] = "/tmp/rxp-not-executable-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  options.argv = {path};
  auto denied = RunHarness(options);
  unlink(path);
  REQUIRE(denied.ok());
  CHECK(ExitCodeOf(denied->wait_status) == 126);
}

TEST_CASE("follows threads and fork and vfork and clone and exec", "[tracer]") {
  Fixture f;
  CHECK(RunTestee({"threads", "16"}, f.options)["threads"] == "16");
  CHECK(RunTestee({"fork"}, f.options)["child"] == "7");
  TesteeRun many = RunTestee({"fork-many", "60"}, f.options);
  CHECK(many["sum"] == std::to_string(59 * 60 / 2));
  // Which of a child's first stop and its creator's event comes first varies; both orders work.
  WARN("children seen before their creator's fork event: " << many.stats.early_children);
  CHECK(RunTestee({"vfork-exec"}, f.options)["child"] == "5");
  CHECK(RunTestee({"exec-chain", "4"}, f.options)["chain_done"] == "1");
  // A non-leader thread execs: its tid becomes the leader's, and the new program runs traced.
  CHECK(RunTestee({"exec-from-thread"}, f.options).exit_code() == 3);
  TesteeRun stopped = RunTestee({"stop-cont"}, f.options);
  CHECK(stopped["stopped"] == std::to_string(SIGSTOP));
  CHECK(stopped["child"] == "4");
}

// Runs a loop scenario 10 and 5000 times: its stop counts must not depend on the length.
TesteeRun CheckStopsDoNotGrow(const std::string& scenario, const HarnessOptions& options) {
  TesteeRun few = RunTestee({scenario, "10"}, options);
  TesteeRun many = RunTestee({scenario, "5000"}, options);
  REQUIRE(many["loops"] == "5000");
  CHECK(many.stats.seccomp_stops == few.stats.seccomp_stops);
  CHECK(many.stats.exit_stops == few.stats.exit_stops);
  return few;
}

TEST_CASE("new tasks are also adopted from proc and kcmp alone", "[tracer]") {
  // The path taken when a child's first stop comes before its creator's fork/clone event
  // (which a creator being killed never reports): every scenario must still work.
  Fixture f;
  f.options.trust_clone_events = false;
  CHECK(RunTestee({"threads", "8"}, f.options)["threads"] == "8");
  CHECK(RunTestee({"fork-many", "20"}, f.options)["sum"] == std::to_string(19 * 20 / 2));
  CHECK(RunTestee({"vfork-exec"}, f.options)["child"] == "5");
  TesteeRun forked = RunTestee({"fork-device", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(forked["child"] == "0");
  CHECK(f.factory.record.CountCalls(SYS_read) == 2);  // the child inherited fd and filter
  RecordingFactory clone_factory;
  f.options.factory = &clone_factory;
  TesteeRun cloned = RunTestee({"clone-files", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(cloned["read_after_child_close"] == "-EBADF");  // kcmp saw the shared fd table
  REQUIRE(clone_factory.record.closes.size() == 1);
  CHECK(clone_factory.record.closes[0] == CloseReason::kClosed);
  CHECK(RunTestee({"threads-device", "/dev/infiniband/uverbs0", "4"}, f.options)["threads_ok"] == "4");
}

TEST_CASE("untouched syscalls never stop", "[tracer]") {
  Fixture f;
  // getpid/read/write/fstat/ioctl on ordinary fds.
  CheckStopsDoNotGrow("syscall-loop", f.options);
}

TEST_CASE("reserved-range fds only stop once the process holds a proxied fd", "[tracer]") {
  Fixture f;
  // No device: the device filter is not there, and an ordinary fd in the range runs freely.
  TesteeRun few = CheckStopsDoNotGrow("range-fd-loop", f.options);
  CHECK(few.stats.device_filters == 0);
  // With a proxied fd, every syscall on an fd in the range's stopping half stops; the unrelated
  // fd has no handler.
  TesteeRun with_device = RunTestee({"range-fd-loop", "5000", "/dev/infiniband/uverbs0"}, f.options);
  REQUIRE(with_device["loops"] == "5000");
  CHECK(with_device.stats.device_filters == 1);
  CHECK(with_device.stats.seccomp_stops >= few.stats.seccomp_stops + 5000);
  CHECK(f.factory.record.CountCalls(SYS_read) == 0);
}

TEST_CASE("the device filter reaches every thread and CLONE_FILES siblings", "[tracer]") {
  Fixture f;
  TesteeRun threads = RunTestee({"threads-device", "/dev/infiniband/uverbs0", "8"}, f.options);
  CHECK(threads["threads_ok"] == "8");
  CHECK(f.factory.record.CountCalls(SYS_read) == 8);
  CHECK(threads.stats.device_filters == 1);

  RecordingFactory sibling_factory;
  f.options.factory = &sibling_factory;
  TesteeRun late = RunTestee({"clone-files-late", "/dev/infiniband/uverbs0"}, f.options);
  INFO(late.out << late.errors);
  CHECK(late["child"] == "0");
  CHECK(late.stats.device_filters == 2);
  CHECK(sibling_factory.record.CountCalls(SYS_read) == 1);
}

TEST_CASE("netlink RDMA sockets can be refused, and io_uring is, by the filter alone", "[tracer]") {
  Fixture f;
  f.options.netlink_rdma = NetlinkRdmaMode::kRefused;
  TesteeRun run = RunTestee({"netlink"}, f.options);
  CHECK(run["rdma"] == "-EPROTONOSUPPORT");
  CHECK(run["route"] == "0");
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kNetlinkSocket)] == 0);
  CHECK(RunTestee({"io-uring"}, f.options)["io_uring_setup"] == "-ENOSYS");
}

TEST_CASE("a netlink RDMA socket is the program's own, moved into the range", "[tracer]") {
  Fixture f;
  TesteeRun run = RunTestee({"netlink"}, f.options);
  CHECK(run["route"] == "0");
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kNetlinkSocket)] == 1);
  // What the kernel says natively: a socket (then in the range), or its errno when this
  // kernel has no RDMA netlink (the VM test bed checks the requests: vm.conformance).
  const int native = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, kNetlinkRdma);
  if (native >= 0) {
    close(native);
    CHECK(InRange(run["rdma_fd"]));
    CHECK(run["rdma"] == "0");
  } else {
    CHECK(run["rdma"] == "-" + std::string(strerrorname_np(errno)));
  }
}

TEST_CASE("a proxied open lands in the reserved range, and so do its copies", "[tracer]") {
  Fixture f;
  TesteeRun run = RunTestee({"device", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  CHECK(InRange(run["fd"]));
  CHECK(InRange(run["dup"]));
  CHECK(InRange(run["dupfd"]));
  CHECK(InRange(run["dupfd_cloexec"]));
  CHECK(run["dup2_low"] == "-EBADF");  // a copy below the range would escape the filter
  CHECK(InRange(run["dup3_high"]));
  CHECK(InRange(run["dup_highbits"]));  // the high half of the register is ignored, as the kernel does
  // A device's copy never lands in the quiet half, where its calls would not stop.
  CHECK(run["dup3_quiet"] == "-EBADF");
  CHECK(run["at_800_after"] == "-EBADF");  // the refused dup3 made nothing there
  for (const char* key : {"fd", "dup", "dupfd", "dupfd_cloexec", "dup3_high", "dup_highbits",
                          "dupfd_asked_low"}) {
    INFO(key);
    CHECK(kRange.StoppingHalf().Contains(static_cast<uint64_t>(std::stol(run[key]))));
  }
  CHECK(run["read"] == "0");
  CHECK(run["close"] == "0");
  CHECK(run["read_closed"] == "-EBADF");
  REQUIRE(f.factory.record.opens.size() == 1);
  const OpenedPath& opened = f.factory.record.opens[0];
  CHECK(opened.sandbox_path == "/dev/infiniband/uverbs0");
  CHECK(opened.host_path == "/dev/null");
  CHECK(opened.label == "uverbs0");
  CHECK(opened.fd == std::stoi(run["fd"]));
  CHECK(f.factory.record.CountCalls(SYS_read) == 1);  // read_closed never reached the handler
  // One open file description, many fds: OnClose once, when the process exits.
  REQUIRE(f.factory.record.closes.size() == 1);
  CHECK(f.factory.record.closes[0] == CloseReason::kExit);
  CHECK(run.stats.fds_moved >= 1);
  CHECK(run.stats.injected_syscalls >= 2);  // fcntl(F_DUPFD) + close, plus the scratch mmap
}

TEST_CASE("copies of a file whose data syscalls need no stop go in the quiet half", "[tracer]") {
  Fixture f;
  f.factory.data_syscalls_stop = false;
  TesteeRun run = RunTestee({"quiet_copies", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  auto number = [&](const char* key) { return static_cast<uint64_t>(std::stol(run[key])); };
  CHECK(kRange.StoppingHalf().Contains(number("fd")));  // an open by path is a device's
  for (const char* key : {"dup", "dupfd"}) {
    INFO(key);
    CHECK(InRange(run[key]));
    CHECK_FALSE(kRange.StoppingHalf().Contains(number(key)));
  }
  CHECK(run["read_copy"] == "0");
  CHECK(f.factory.record.CountCalls(SYS_read) == 0);  // the read did not stop
  CHECK(InRange(run["dup3_other_half"]));  // an event file may sit in the other half: it only stops
}

TEST_CASE("a program that lowers its RLIMIT_NOFILE below the range still gets proxied fds", "[tracer]") {
  rlimit mine{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &mine) == 0);
  if (mine.rlim_max < kRange.end()) {
    WARN("not run: this process's hard RLIMIT_NOFILE is below the range");
    return;
  }
  Fixture f;
  SECTION("the soft limit only: honoured, raised only while the fd moves") {
    TesteeRun run = RunTestee({"low-nofile", "/dev/infiniband/uverbs0", "200/1024"}, f.options);
    INFO(run.out << run.errors);
    CHECK(run["setrlimit"] == "0");
    CHECK(run["soft"] == "200");
    CHECK(run["hard"] == "1024");
    CHECK(InRange(run["fd"]));
    CHECK(InRange(run["dup"]));  // copies too, as natively they succeed
    CHECK(InRange(run["dupfd_below_soft"]));
    CHECK(run["dupfd_at_soft_proxied"] == "-EINVAL");  // natively so
    CHECK(run["soft_after"] == "200");
    CHECK(run["dupfd_at_soft"] == "-EINVAL");  // the program's own fds: as natively
  }
  SECTION("both, as `ulimit -n 256` sets them: the hard limit is kept at the range's end") {
    for (const char* how : {"low-nofile", "low-nofile-raw"}) {
      TesteeRun run = RunTestee({how, "/dev/infiniband/uverbs0", "256/256"}, f.options);
      INFO(how << "\n" << run.out << run.errors);
      CHECK(run["setrlimit"] == "0");
      CHECK(run["soft"] == "256");
      CHECK(run["hard"] == "256");  // as set, although the kernel holds the range's end
      CHECK(InRange(run["fd"]));
      CHECK(run["soft_after"] == "256");
      CHECK(run["dupfd_at_soft"] == "-EINVAL");
      CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kNofileLimit)] == 1);
      CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kNofileQuery)] == 2);
    }
  }
  SECTION("a lowered hard limit reads and binds as natively: queries, raises, children, exec") {
    for (const char* drop : {"1", "0"}) {  // without CAP_SYS_RESOURCE, and as the test runs
      INFO("drop " << drop);
      const std::string natively = RunNatively({"nofile-hard", drop});
      TesteeRun run = RunTestee({"nofile-hard", drop}, f.options);
      INFO(run.out << run.errors);
      CHECK(run.out + "status=0\n" == natively);
      if (std::string(drop) == "1") {
        CHECK(run["raise"] == "-EPERM");
        CHECK(run["exec_limits"] == "210/256");
      }
      CHECK(run["query_hard"] == "256");
      CHECK(run["soft_above_hard"] == "-EINVAL");
    }
    TesteeRun device = RunTestee({"nofile-hard", "1", "/dev/infiniband/uverbs0"}, f.options);
    INFO(device.out << device.errors);
    CHECK(InRange(device["fd"]));  // the range is still reachable
    CHECK(device["exec_limits"] == "210/256");
  }
  SECTION("a query does not stop") {
    TesteeRun run = RunTestee({"low-nofile", "/dev/infiniband/uverbs0", "1024/1024"}, f.options);
    INFO(run.out << run.errors);
    CHECK(InRange(run["fd"]));
    CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kNofileLimit)] == 1);  // the set
  }
}

TEST_CASE("a tracer that polls for stops behaves as one that sleeps", "[tracer]") {
  Fixture f;
  f.options.stop_poll = std::chrono::microseconds(2000);
  CHECK(RunTestee({"threads", "16"}, f.options)["threads"] == "16");
  CHECK(RunTestee({"fork-many", "20"}, f.options)["sum"] == std::to_string(19 * 20 / 2));
  TesteeRun stopped = RunTestee({"stop-cont"}, f.options);
  CHECK(stopped["stopped"] == std::to_string(SIGSTOP));
  // Injected syscalls (the fd moves, the scratch mmap) wait for their stops through it too.
  TesteeRun run = RunTestee({"device", "/dev/infiniband/uverbs0"}, f.options);
  // A stop is caught while polling only if the program reaches it within the 2 ms: on a loaded
  // CI runner a whole run can miss, so a few runs get the chance.
  for (int again = 0; again < 4 && MayUseSeveralCpus() && run.stats.waits.caught == 0; ++again)
    run = RunTestee({"device", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  CHECK(InRange(run["fd"]));
  CHECK(InRange(run["dup"]));
  CHECK(run["read_closed"] == "-EBADF");
  CHECK(run.stats.injected_syscalls >= 2);
  const uint64_t waits = run.stats.waits.caught + run.stats.waits.slept;
  if (MayUseSeveralCpus()) {
    CHECK(waits > 0);
    CHECK(run.stats.waits.caught > 0);
  } else {
    CHECK(waits == 0);  // one CPU: never polls
  }
  // Off (the default): no wait is counted.
  f.options.stop_poll = std::chrono::microseconds(0);
  TesteeRun off = RunTestee({"device", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(off.stats.waits.caught + off.stats.waits.slept == 0);
  CHECK(InRange(off["fd"]));
}

TEST_CASE("paths are canonicalized before they are redirected", "[tracer]") {
  Fixture f;
  CHECK(InRange(RunTestee({"open", "//dev///infiniband/./uverbs0"}, f.options)["fd"]));
  CHECK(InRange(RunTestee({"open", "/dev/infiniband/../infiniband/uverbs1"}, f.options)["fd"]));
  CHECK(InRange(RunTestee({"openat", "/dev/infiniband", "uverbs0"}, f.options)["fd"]));
  CHECK(InRange(RunTestee({"chdir-open", "/dev", "infiniband/uverbs0"}, f.options)["fd"]));
  // Devices not allowed do not exist.
  CHECK(RunTestee({"open", "/dev/infiniband/uverbs7"}, f.options)["fd"] == "-ENOENT");
  CHECK(RunTestee({"stat", "/dev/infiniband/issm0"}, f.options)["stat"] == "-ENOENT");
  CHECK(RunTestee({"access", "/dev/infiniband/umad0"}, f.options)["access"] == "-ENOENT");
  // A stat of a redirected device reports the host file.
  struct stat null_st{};
  stat("/dev/null", &null_st);
  CHECK(RunTestee({"stat", "/dev/infiniband/uverbs0"}, f.options)["ino"] ==
        std::to_string(null_st.st_ino));
}

TEST_CASE("path rewriting follows the kernel through dirfds and cwd and dotdot and symlinks", "[tracer]") {
  Fixture f;
  const std::string file_ino = std::to_string(f.tree.Ino("real/a/file"));
  CHECK(RunTestee({"stat", "/rxp-sandbox/a/file"}, f.options)["ino"] == file_ino);
  CHECK(RunTestee({"openat", "/rxp-sandbox/a", "file"}, f.options)["ino"] == file_ino);
  CHECK(RunTestee({"openat", "/rxp-sandbox/b", "../a/file"}, f.options)["ino"] == file_ino);
  CHECK(RunTestee({"chdir-open", "/rxp-sandbox/a", "file"}, f.options)["ino"] == file_ino);
  CHECK(RunTestee({"chdir-open", "/rxp-sandbox/b", "../a/./file"}, f.options)["ino"] == file_ino);
  // ".." after a symlink climbs from the link's target (lnk -> a/deep, so lnk/.. is a).
  CHECK(RunTestee({"stat", "/rxp-sandbox/lnk/../file"}, f.options)["ino"] == file_ino);
  // lstat and readlink see the link itself.
  TesteeRun link = RunTestee({"lstat", "/rxp-sandbox/lnk"}, f.options);
  CHECK(S_ISLNK(std::stoul(link["mode"], nullptr, 8)));
  CHECK(RunTestee({"readlink", "/rxp-sandbox/lnk"}, f.options)["target"] ==
        f.tree.root + "/real/a/deep");
  CHECK(RunTestee({"list", "/rxp-sandbox"}, f.options)["entries"] == "a,b,lnk");
  CHECK(RunTestee({"stat", "/rxp-sandbox/missing"}, f.options)["stat"] == "-ENOENT");
}

TEST_CASE("a cwd in a redirected directory is named and left as the sandbox sees it", "[tracer]") {
  Fixture f;
  auto ino_of = [](const char* path) {
    struct stat st{};
    stat(path, &st);
    return std::to_string(st.st_ino);
  };
  // getcwd names the sandbox's directory, not the host one it was redirected to; ".." from it
  // is the sandbox's parent, also where that parent is not redirected (the kernel would climb
  // the host directory's).
  TesteeRun dev = RunTestee({"chdir-cwd", "/dev/infiniband", ".."}, f.options);
  INFO(dev.out << dev.errors);
  CHECK(dev["chdir"] == "0");
  CHECK(dev["cwd"] == "/dev/infiniband");
  CHECK(dev["cwd_len"] == std::to_string(sizeof("/dev/infiniband")));
  CHECK(dev["cwd_short"] == "-ERANGE");
  CHECK(dev["ino"] == ino_of("/dev"));
  TesteeRun deep = RunTestee({"chdir-cwd", "/rxp-sandbox/a", "../.."}, f.options);
  INFO(deep.out << deep.errors);
  CHECK(deep["cwd"] == "/rxp-sandbox/a");
  CHECK(deep["ino"] == ino_of("/"));
  CHECK(RunTestee({"chdir-cwd", "/rxp-sandbox/b", "../a/file"}, f.options)["ino"] ==
        std::to_string(f.tree.Ino("real/a/file")));
  // A cwd nothing redirects: getcwd runs as issued (one stop, no rewrite).
  TesteeRun plain = RunTestee({"chdir-cwd", "/tmp", ".."}, f.options);
  CHECK(plain["cwd"] == "/tmp");
  CHECK(plain["ino"] == ino_of("/"));
  CHECK(plain.stats.by_intercept[static_cast<size_t>(Intercept::kGetcwd)] == 2);
  // With nothing redirected at all (no resolver), the same.
  TesteeRun bare = RunTestee({"chdir-cwd", "/tmp", ".."});
  INFO(bare.out << bare.errors);
  CHECK(bare["cwd"] == "/tmp");
  CHECK(bare["cwd_short"] == "-ERANGE");
  CHECK(bare.exit_code() == 0);
}

// The names readdir gives natively for `dir`, in its order, without "." and "..".
std::vector<std::string> NativeListing(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d != nullptr ? readdir(d) : nullptr)
    if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..")
      names.emplace_back(e->d_name);
  if (d != nullptr) closedir(d);
  return names;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

TEST_CASE("a proxied directory is listed in the harness's order", "[tracer]") {
  Fixture f;
  const std::string dir = f.tree.root + "/verbs-class";
  fs::create_directories(dir);
  for (const char* name : {"uverbs0", "uverbs1", "uverbs2", "uverbs3", "uverbs10"})
    fs::create_directories(dir + "/" + name);
  std::ofstream(dir + "/abi_version") << "6\n";
  const std::vector<std::string> native = NativeListing(dir);
  REQUIRE(native.size() == 6);
  // The wanted order is the reverse of the kernel's, so that every device entry must move.
  std::vector<std::string> order;
  for (auto it = native.rbegin(); it != native.rend(); ++it)
    if (*it != "abi_version") order.push_back(*it);
  std::vector<std::string> want = native;  // abi_version stays in its slot
  for (size_t i = 0, k = 0; i < want.size(); ++i)
    if (want[i] != "abi_version") want[i] = order[k++];

  auto rules = f.Rules();
  // As DeviceView serves it: the class directory's tree rewritten, the directory itself proxied.
  rules.push_back({"/sys/class/infiniband_verbs", PathRule::Match::kTree,
                   Resolution::Kind::kRewrite, dir, 0, false, "sysfs view"});
  PathRule listing{"/sys/class/infiniband_verbs", PathRule::Match::kExact,
                   Resolution::Kind::kRewrite, dir, 0, true, "infiniband_verbs listing"};
  listing.listing_order = std::make_shared<std::vector<std::string>>(order);
  rules.push_back(listing);
  RuleResolver resolver(rules);
  f.options.resolver = &resolver;

  TesteeRun run = RunTestee({"list-raw", "/sys/class/infiniband_verbs"}, f.options);
  CHECK(run["entries"] == Joined(want));
  CHECK(InRange(run["dirfd"]));
  CHECK(f.factory.record.opens.empty());  // the harness's own handler, not the factory's
  // Entries below it and other paths are not proxied: the kernel's order, an ordinary fd.
  TesteeRun below = RunTestee({"list-raw", "/sys/class/infiniband_verbs/uverbs0"}, f.options);
  CHECK(below["entries"].empty());
  CHECK_FALSE(InRange(below["dirfd"]));
  CHECK(RunTestee({"list-raw", dir}, f.options)["entries"] == Joined(native));
}

TEST_CASE("asynchronous IO on a proxied fd is refused and on other fds it runs", "[tracer]") {
  Fixture f;
  // uverbs2 is a proxied plain file, where aio works natively: only the harness refuses it.
  TesteeRun run = RunTestee({"aio-write", "/dev/infiniband/uverbs2"}, f.options);
  CHECK(run["aio_null"] == "1");
  CHECK(run["aio_proxied"] == "-EINVAL");
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kAioSubmit)] == 2);
  // A process without proxied fds has no device filter: its io_submit never stops.
  TesteeRun plain = RunTestee({"aio-write", "/dev/null"}, f.options);
  CHECK(plain["aio_proxied"] == "1");
  CHECK(plain.stats.by_intercept[static_cast<size_t>(Intercept::kAioSubmit)] == 0);
}

TEST_CASE("handlers see proxied calls and can deny or emulate them", "[tracer]") {
  Fixture f;
  f.factory.on_entry = [](const SyscallView& call, TraceeAccess&) {
    if (call.nr == SYS_ioctl) return EntryDecision::Deny(Fail(EACCES, "test says no"));
    if (call.nr == SYS_read) return EntryDecision::Emulate(42);
    return EntryDecision::Allow();
  };
  // The stand-in device (/dev/null) reached through a private symlink the path check does not
  // see: it opens, outside the range, and its verbs ioctl is refused.
  const std::string alias = f.tree.root + "/alias";
  fs::create_symlink("/dev/null", alias);
  TesteeRun run = RunTestee({"scm-rights", "/dev/infiniband/uverbs0", alias}, f.options);
  INFO(run.out << run.errors);
  CHECK(InRange(run["fd"]));
  CHECK(run["ioctl_verbs_proxied"] == "-EACCES");
  CHECK(run.errors.find("test says no") != std::string::npos);
  CHECK(run["sent_proxied"] == "-EPERM");  // SCM_RIGHTS of a proxied fd
  CHECK(run.errors.find("SCM_RIGHTS") != std::string::npos);
  CHECK(run["sent_ordinary"] == "0");
  CHECK_FALSE(InRange(run["alias_fd"]));
  CHECK(run["ioctl_verbs_alias"] == "-EPERM");
  CHECK(run.errors.find("not opened through the harness") != std::string::npos);
  CHECK(RunTestee({"device", "/dev/infiniband/uverbs0"}, f.options)["read"] == "42");
}

TEST_CASE("a seccomp filter of the program's own cannot steer a stop past the tracer", "[tracer]") {
  Fixture f;
  f.factory.on_entry = [](const SyscallView& call, TraceeAccess&) {
    if (call.nr == SYS_ioctl) return EntryDecision::Deny(Fail(EACCES, "test says no"));
    return EntryDecision::Allow();
  };
  // The program's filter returns SECCOMP_RET_TRACE on ioctl, openat and getppid, with data the
  // tracer does not dispatch (0 and 0xffff), or with another rule's tag (close's).
  for (const unsigned tag : {0U, 0xffffU, static_cast<unsigned>(Intercept::kClose)}) {
    INFO("tag " << tag);
    TesteeRun run = RunTestee({"own-filter", "/dev/infiniband/uverbs0", "/rxp-sandbox/a/file",
                               std::to_string(tag)},
                              f.options);
    INFO(run.out << run.errors);
    CHECK(InRange(run["fd"]));
    CHECK(run["own_filter"] == "0");
    // Still the handler's call, and still a redirected path.
    CHECK(run["ioctl_verbs_proxied"] == "-EACCES");
    CHECK(run["sandboxed_read"] == "1");
    CHECK(run["sandboxed_x"] == "1");
    // A stop only the program's filter asked for: ENOSYS, as with no tracer attached.
    CHECK(run["getppid"] == "-ENOSYS");
    CHECK(run["getppid_again"] == "-ENOSYS");
    CHECK(run.stats.foreign_trace_stops == 2);
    // One log line per process and syscall.
    const std::string line = "seccomp filter of the program's own";
    const size_t first = run.errors.find(line);
    CHECK(first != std::string::npos);
    CHECK(run.errors.find(line, first + 1) == std::string::npos);
    // A listener (whose CONTINUE would outrank every stop) and an untraced child are refused;
    // clone3 is ENOSYS, and glibc's fork and pthread_create, which fall back to clone, work.
    CHECK(run["listener"] == "-EBUSY");
    CHECK(run.errors.find("SECCOMP_FILTER_FLAG_NEW_LISTENER") != std::string::npos);
    CHECK(run["clone_untraced"] == "-EPERM");
    CHECK(run.errors.find("CLONE_UNTRACED") != std::string::npos);
    CHECK(run["clone3"] == "-ENOSYS");
    CHECK(run["fork_child"] == "7");
    CHECK(run["thread"] == "1");
  }
}

TEST_CASE("remap_file_pages is refused where proxied fds are, and runs elsewhere", "[tracer]") {
  Fixture f;
  // uverbs2 is a proxied plain file: natively remap_file_pages works on it.
  TesteeRun proxied = RunTestee({"remap-file-pages", "/dev/infiniband/uverbs2"}, f.options);
  INFO(proxied.out << proxied.errors);
  CHECK(InRange(proxied["fd"]));
  CHECK(proxied["mmap"] == "0");
  CHECK(proxied["remap"] == "-EPERM");
  CHECK(proxied.errors.find("remap_file_pages is refused") != std::string::npos);
  TesteeRun plain = RunTestee({"remap-file-pages", f.tree.root + "/device-file"}, f.options);
  INFO(plain.out << plain.errors);
  CHECK(plain["remap"] == "0");
  CHECK(plain.stats.by_intercept[static_cast<size_t>(Intercept::kRemapFilePages)] == 0);
}

// The read-only scratch slots hold the copies the kernel reads (a redirected path, a write()
// command, a netlink request): the program can neither unprotect the region (sealed where the
// kernel has mseal; elsewhere at a fixed low window whose calls the base filter stops) nor
// write it through /proc/<pid>/mem, whose writes reach read-only pages. Natively the same
// program opens /proc/self/mem for writing.
void CheckScratchGuarded(const TesteeRun& run) {
  INFO(run.out << run.errors);
  CHECK(run.exit_code() == 0);
  CHECK(run["found"] == "1");
  for (const char* key : {"mprotect", "munmap", "dontneed", "map-over", "device-over", "child-mprotect"}) {
    INFO(key);
    CHECK(run[key] == "-EPERM");
  }
  CHECK(run["mem-read"] == "0");
  CHECK(run["symlink"] == "0");
  for (const char* key : {"mem-rdwr", "task-mem", "via-link", "via-dirfd", "openat2", "parent-mem"}) {
    INFO(key);
    CHECK(run[key] == "-EACCES");
  }
  CHECK(run.errors.find("for writing refused with EACCES") != std::string::npos);
}

TEST_CASE("the scratch region stays read-only: sealed or guarded, and /proc/<pid>/mem is not writable", "[tracer]") {
  Fixture f;
  SECTION("as the kernel allows: mseal (Linux 6.10), else the fixed window") {
    TesteeRun run = RunTestee({"scratch-guard", f.tree.root, "/dev/infiniband/uverbs2"}, f.options);
    CheckScratchGuarded(run);
    if (KernelSealsMappings()) {
      // Sealed where the kernel placed it, with no guard rules and no stops.
      CHECK(run["region"] != std::to_string(LowScratchBase()));
      CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kScratchGuard)] == 0);
    } else {
      CHECK(run["region"] == std::to_string(LowScratchBase()));
    }
  }
  SECTION("the fixed window and its filter rules, on any kernel") {
    f.options.scratch_guard = HarnessOptions::ScratchGuard::kWindow;
    TesteeRun run = RunTestee({"scratch-guard", f.tree.root, "/dev/infiniband/uverbs2"}, f.options);
    CheckScratchGuarded(run);
    INFO(run.out << run.errors);
    CHECK(run["region"] == std::to_string(LowScratchBase()));
    // Memory below the window stops, and is the program's: only what reaches the region is
    // refused (the last munmap spans into it).
    CHECK(run["below-map"] == "0");
    CHECK(run["below-mprotect"] == "0");
    CHECK(run["below-unmap"] == "0");
    CHECK(run["span-unmap"] == "-EPERM");
    CHECK(run.errors.find("reaches the harness's scratch region") != std::string::npos);
    // mprotect, munmap, madvise, mmap over it, the child's mprotect; below-map/-mprotect/-unmap
    // and span-unmap. (The device's mmap over it stops as a proxied fd's call.)
    CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kScratchGuard)] == 9);
  }
  SECTION("natively, the same program writes /proc/self/mem") {
    const std::string command = std::string(RXP_TESTEE) + " scratch-guard " + f.tree.root;
    FILE* native = popen(command.c_str(), "r");
    REQUIRE(native != nullptr);
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof(buf), native) != nullptr) out += buf;
    CHECK(pclose(native) == 0);
    INFO(out);
    CHECK(out.find("found=0") != std::string::npos);
    CHECK(out.find("mem-rdwr=0") != std::string::npos);
    CHECK(out.find("via-link=0") != std::string::npos);
  }
}

TEST_CASE("no traced process writes a scratch region with process_vm_writev", "[tracer]") {
  // The writable half holds the engine's validated copy of an ioctl while the kernel runs it;
  // the freeze holds the caller's address space only, so another process's write is refused
  // (EFAULT, as for unmapped memory natively), and a write that reaches it ends before it.
  Fixture f;
  TesteeRun run = RunTestee({"process-vm-write"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(run["found"] == "1");
  CHECK(run["plain"] == "8");
  CHECK(run["writable-half"] == "-EFAULT");
  CHECK(run["partial"] == "8");
  CHECK(run["self"] == "-EFAULT");
  CHECK(run["child-saw-write"] == "1");
  CHECK(run.errors.find("process_vm_writev to pid") != std::string::npos);
  CHECK(run.errors.find("reaches the harness's scratch region") != std::string::npos);
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kProcessVmWrite)] == 4);
}

TEST_CASE("a program whose own seccomp filter refuses mseal runs: its region goes at the window, guarded", "[tracer]") {
  Fixture f;
  // An allow-list written before mseal(2) existed answers it with death, SIGSYS or an errno.
  // The harness saw the filter installed (seccomp or prctl), so the program it then runs gets
  // its region at the window instead of a sealed one -- on a kernel with mseal, with a guard
  // filter of its own -- and the region is as read-only as a sealed one.
  for (const char* action : {"kill", "trap", "errno"}) {
    for (const char* via : {"seccomp", "prctl"}) {
      INFO(action << " via " << via);
      TesteeRun run = RunTestee({"filter-exec", action, via, "scratch-guard", f.tree.root,
                                 "/dev/infiniband/uverbs2"},
                                f.options);
      INFO(run.out << run.errors);
      CheckScratchGuarded(run);
      CHECK(run.errors.find("cannot set up the harness scratch region") == std::string::npos);
      CHECK(run["region"] == std::to_string(LowScratchBase()));
      CHECK(run["below-map"] == "0");
      CHECK(run["below-unmap"] == "0");
      CHECK(run["span-unmap"] == "-EPERM");
      // Twice: the harness's filters went in ahead of the program's, whose call then ran.
      CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kSeccompFilter)] == 2);
      CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kScratchGuard)] == 9);
      CHECK(run.stats.device_filters == 1);
    }
  }
}

TEST_CASE("a program whose own seccomp filter forbids seccomp still gets the harness's filters", "[tracer]") {
  Fixture f;
  // An allow-list that lets no further filter in kills the program at the harness's next
  // injected seccomp(2) -- the device filter at its first proxied open, the nofile filter when
  // it lowers its hard RLIMIT_NOFILE -- unless those went in ahead of the program's filter.
  for (const char* via : {"seccomp", "prctl"}) {
    INFO(via);
    const std::string natively = RunNatively({"filter-exec", "kill-seccomp", via, "nofile-hard", "1"});
    CHECK(natively.find("exec_limits=210/256\nstatus=0\n") != std::string::npos);
    TesteeRun same = RunTestee({"filter-exec", "kill-seccomp", via, "nofile-hard", "1"}, f.options);
    INFO(same.out << same.errors);
    CHECK(same.out + "status=0\n" == natively);
    TesteeRun run = RunTestee({"filter-exec", "kill-seccomp", via, "nofile-hard", "1",
                               "/dev/infiniband/uverbs0"}, f.options);
    INFO(run.out << run.errors);
    CHECK(run.term_signal() == 0);
    CHECK(InRange(run["fd"]));
    CHECK(run["query_hard"] == "256");
    CHECK(run["raise"] == "-EPERM");
    CHECK(run["exec_limits"] == "210/256");
    CHECK(run.exit_code() == 0);
    CHECK(run.stats.device_filters == 1);
  }
}

TEST_CASE("strict mode works as natively: read and write only, any other call kills", "[tracer]") {
  Fixture f;
  const auto native = RunNatively;
  for (const char* via : {"prctl", "seccomp"}) {
    INFO(via);
    const std::string natively = native({"strict", via});
    CHECK(natively == "strict=0\nstatus=137\n");  // the shell's 128 + SIGKILL
    TesteeRun run = RunTestee({"strict", via}, f.options);
    INFO(run.out << run.errors);
    CHECK(run["strict"] == "0");
    CHECK(run.out.find("survived") == std::string::npos);
    CHECK(run.term_signal() == SIGKILL);
  }
  // Refused as natively: a flag, or a thread that has a filter of its own.
  const std::string einval = std::to_string(-EINVAL);  // written raw: strict mode has no stdio
  CHECK(native({"strict", "seccomp-bad"}) == "strict=" + einval + "\nstatus=0\n");
  CHECK(RunTestee({"strict", "seccomp-bad"}, f.options)["strict"] == einval);
  CHECK(native({"strict", "prctl", "filter"}) == "strict=" + einval + "\nstatus=0\n");
  TesteeRun filtered = RunTestee({"strict", "prctl", "filter"}, f.options);
  CHECK(filtered["strict"] == einval);
  CHECK(filtered.exit_code() == 0);
  // A thread among others: it alone ends, the process goes on.
  CHECK(native({"strict-thread"}) == "thread_strict=0\nafter=1\nstatus=0\n");
  TesteeRun thread = RunTestee({"strict-thread"}, f.options);
  INFO(thread.out << thread.errors);
  CHECK(thread["thread_strict"] == "0");
  CHECK(thread["after"] == "1");
  CHECK(thread.exit_code() == 0);
}

TEST_CASE("handlers can hand the kernel a private copy through scratch memory", "[tracer]") {
  Fixture f;
  // The program writes "hello" to a proxied file; the handler copies it, upper-cased, into
  // scratch memory and points the call there: the file gets the handler's copy.
  f.factory.on_entry = [](const SyscallView& call, TraceeAccess& tracee) {
    if (call.nr != SYS_write) return EntryDecision::Allow();
    std::string text(call.args[2], '\0');
    auto read = tracee.memory().Read(call.args[1], std::as_writable_bytes(std::span(text)));
    auto buf = tracee.Scratch(text.size());
    if (!read.ok() || !buf.ok()) return EntryDecision::Deny(Fail(EFAULT, "test"));
    for (char& c : text) c = static_cast<char>(std::toupper(c));
    if (!tracee.memory().WriteForced(*buf, std::as_bytes(std::span(text))).ok())
      return EntryDecision::Deny(Fail(EFAULT, "test"));
    return EntryDecision::Allow().WithArg(1, *buf);
  };
  TesteeRun run = RunTestee({"write-proxied", "/dev/infiniband/uverbs2", "hello", "3"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run["wrote"] == "15");
  std::ifstream file(f.tree.root + "/device-file");
  std::string content((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(content == "HELLOHELLOHELLO");
  // Taking scratch and then refusing the call gives the slot back (no exit stop follows).
  RecordingFactory refusing;
  refusing.on_entry = [](const SyscallView& call, TraceeAccess& tracee) {
    if (call.nr == SYS_write && tracee.Scratch(16).ok())
      return EntryDecision::Deny(Fail(EPERM, "refused after taking scratch"));
    return EntryDecision::Allow();
  };
  f.options.factory = &refusing;
  CHECK(RunTestee({"write-proxied", "/dev/infiniband/uverbs2", "x", "100"}, f.options)["wrote"] ==
        "-EPERM");
}

// What the engine does with an ioctl — a private image in KernelScratch, the call pointed at
// it — plus a check, at exit, that no other task of the process ran meanwhile: the image is
// still what the handler wrote (the testee's helpers keep writing into every kernel-writable
// slot), and the counter the ioctl points at (which they keep incrementing) has not moved.
struct FreezeProbe {
  static constexpr size_t kImageSize = 512;
  struct Pending {
    uint64_t slot = 0;
    uint64_t counter = 0;
    std::array<std::byte, kImageSize> image{};
  };
  std::map<pid_t, Pending> pending;         // by thread
  std::map<pid_t, uint64_t> exit_counter;   // by thread: the counter at its last exit
  int calls = 0;
  int failed = 0;          // KernelScratch (or a memory access) failed
  std::vector<int> scratch_errors;  // KernelScratch's errnos
  int image_changed = 0;   // at exit, the slot was not what the handler wrote
  int counter_moved = 0;   // at exit, the counter was not what it was after KernelScratch
  int moved_between = 0;   // the counter moved between a thread's calls (its helpers ran)

  void Install(testing::RecordingFactory& factory) {
    factory.on_entry = [this](const SyscallView& call, TraceeAccess& tracee) {
      return Entry(call, tracee);
    };
    factory.on_exit = [this](const SyscallView& call, long, TraceeAccess& tracee) {
      Exit(call, tracee);
      return ExitDecision::Keep();
    };
  }

  EntryDecision Entry(const SyscallView& call, TraceeAccess& tracee) {
    if (call.nr != SYS_ioctl) return EntryDecision::Allow();
    auto slot = tracee.KernelScratch(kImageSize);
    if (!slot.ok()) {
      ++failed;
      scratch_errors.push_back(slot.error().errnum);
      return EntryDecision::Emulate(-slot.error().errnum);
    }
    // From here on the process's other threads are stopped: the counter is read after.
    Pending p;
    p.slot = *slot;
    for (size_t i = 0; i < kImageSize; ++i)
      p.image[i] = static_cast<std::byte>(0xA5 ^ i ^ static_cast<size_t>(calls));
    auto counter = tracee.memory().ReadValue<uint64_t>(call.args[2]);
    if (!counter.ok() || !tracee.memory().Write(*slot, p.image).ok()) {
      ++failed;
      return EntryDecision::Emulate(-EFAULT);
    }
    p.counter = *counter;
    if (auto last = exit_counter.find(call.tid); last != exit_counter.end())
      moved_between += last->second != p.counter;
    pending[call.tid] = p;
    ++calls;
    return EntryDecision::Allow().WithArg(2, *slot);
  }

  void Exit(const SyscallView& call, TraceeAccess& tracee) {
    auto it = pending.find(call.tid);
    if (it == pending.end()) return;
    const Pending p = it->second;
    pending.erase(it);
    std::array<std::byte, kImageSize> now{};
    if (!tracee.memory().Read(p.slot, now).ok() || now != p.image) ++image_changed;
    auto counter = tracee.memory().ReadValue<uint64_t>(call.args[2]);
    if (!counter.ok() || *counter != p.counter) ++counter_moved;
    exit_counter[call.tid] = counter.ok() ? *counter : 0;
  }
};

// A fixture with a FreezeProbe whose freezes wait 10 s before giving up: a hold-up waits it out
// and shows in freeze_failures.
struct PatientFreezeFixture {
  Fixture f;
  FreezeProbe probe;
  PatientFreezeFixture() {
    f.options.freeze_timeout = std::chrono::seconds(10);
    probe.Install(f.factory);
  }
};

TEST_CASE("no other thread runs while a thread's KernelScratch syscall runs", "[tracer][freeze]") {
  Fixture f;
  FreezeProbe probe;
  probe.Install(f.factory);
  // 200 ioctls while 3 threads spin, incrementing the counter and writing into every
  // kernel-writable scratch slot. Without the freeze they race the handler every time.
  TesteeRun run = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "200", "3"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(run["scratch_found"] == "1");
  CHECK(run["enotty"] == "200");
  CHECK(probe.calls == 200);
  CHECK(probe.failed == 0);
  // The helpers did run between the calls...
  CHECK(probe.moved_between >= 100);
  // ...and never during one: not between KernelScratch and the exit stop.
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
  CHECK(run.stats.freezes == 200);
  CHECK(run.stats.freeze_failures == 0);
  CHECK(run.stats.held_stops >= 3 * 200);  // a stop of each helper per call, handled afterwards
}

TEST_CASE("with --no-freeze-threads KernelScratch freezes nothing", "[tracer][freeze]") {
  Fixture f;
  f.options.freeze_address_space = false;
  FreezeProbe probe;
  probe.Install(f.factory);
  TesteeRun run = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "50", "2"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run["enotty"] == "50");
  CHECK(probe.calls == 50);
  CHECK(run.stats.freezes == 0);
  CHECK(run.stats.freeze_interrupts == 0);
}

TEST_CASE("the kernel reads the validated copy, not what another thread wrote meanwhile", "[tracer][freeze]") {
  // ioctl(FIONBIO, &int): the handler copies the program's int into a kernel-writable slot and
  // points the call at it, while 2 threads write 0 and 1 in turn into every such slot. The
  // file's O_NONBLOCK flag afterwards shows which value the kernel read.
  Fixture f;
  int calls = 0, failed = 0;
  f.factory.on_entry = [&](const SyscallView& call, TraceeAccess& tracee) {
    if (call.nr != SYS_ioctl || call.args[1] != FIONBIO) return EntryDecision::Allow();
    auto value = tracee.memory().ReadValue<int>(call.args[2]);
    auto slot = tracee.KernelScratch(sizeof(int));
    if (!value.ok() || !slot.ok() || !tracee.memory().WriteValue(*slot, *value).ok()) {
      ++failed;
      return EntryDecision::Emulate(-EFAULT);
    }
    ++calls;
    return EntryDecision::Allow().WithArg(2, *slot);
  };
  TesteeRun run = RunTestee({"freeze-fionbio", "/dev/infiniband/uverbs0", "1000", "2"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(run["scratch_found"] == "1");
  CHECK(calls == 1000);
  CHECK(failed == 0);
  CHECK(run["failed"] == "0");
  CHECK(run["wrong"] == "0");
  CHECK(run.stats.freezes == 1000);
  CHECK(run.stats.freeze_failures == 0);
}

TEST_CASE("a single-threaded program pays nothing for KernelScratch", "[tracer][freeze]") {
  Fixture f;
  FreezeProbe probe;
  probe.Install(f.factory);
  TesteeRun few = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "10", "0"}, f.options);
  TesteeRun many = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "1010", "0"}, f.options);
  INFO(many.out << many.errors);
  CHECK(many["enotty"] == "1010");
  CHECK(probe.calls == 1020);
  // One seccomp stop and one exit stop per call, nothing else.
  CHECK(many.stats.seccomp_stops - few.stats.seccomp_stops == 1000);
  CHECK(many.stats.exit_stops - few.stats.exit_stops == 1000);
  CHECK(many.stats.freezes == 0);
  CHECK(many.stats.freeze_interrupts == 0);
  CHECK(many.stats.held_stops == 0);
  CHECK(probe.image_changed == 0);
}

TEST_CASE("a freeze that cannot be set up in time refuses the call and loses nothing", "[tracer][freeze]") {
  Fixture f;
  f.options.freeze_timeout = std::chrono::milliseconds(0);  // give up unless all are stopped already
  FreezeProbe probe;
  probe.Install(f.factory);
  TesteeRun run = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "200", "3"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run.exit_code() == 0);
  CHECK(run["other"] == "0");
  CHECK(run.Number("eagain") > 0);
  CHECK(run.Number("enotty") + run.Number("eagain") == 200);
  CHECK(static_cast<long>(run.stats.freeze_failures) == run.Number("eagain"));
  // The calls that did run were frozen properly.
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
}

// A device the kernel opened at a low number, or a copy of it, is not moved into the range
// until the exit stop is handled: the threads and CLONE_FILES processes that share the fd
// table are held meanwhile (FreezeAroundNewFd), so none of them can reach it unstopped.
TEST_CASE("no thread or CLONE_FILES process sees a new device fd before it is in the range", "[tracer][freeze]") {
  const bool freeze = GENERATE(true, false);
  const std::string helpers = GENERATE(as<std::string>{}, "threads", "processes");
  Fixture f;
  f.options.freeze_address_space = freeze;
  // Without the freezes a sighting needs a helper to be on a CPU inside the window; on a
  // loaded two-core CI runner a whole run can miss it, so the control gets a few runs.
  const int attempts = freeze ? 1 : 6;
  long seen = 0;
  for (int attempt = 0; attempt < attempts && (freeze || seen == 0); ++attempt) {
    TesteeRun run =
        RunTestee({"open-window", "/dev/infiniband/uverbs0", "200", "2", helpers}, f.options);
    INFO(helpers << (freeze ? " with" : " without") << " freezes, run " << attempt << ": "
                 << run.out << run.errors);
    REQUIRE(run.exit_code() == 0);
    CHECK(run["opened"] == "200");
    CHECK(run["copied"] == "400");
    CHECK(run["low"] == "0");
    CHECK(run.Number("scans") >= 200);
    seen += run.Number("seen");
    if (freeze) {
      CHECK(run["seen"] == "0");
      CHECK(run.stats.freezes == 600);  // one per open and copy made while the helpers ran
      CHECK(run.stats.freeze_failures == 0);
    } else {
      CHECK(run.stats.freezes == 0);
    }
  }
  // The window is real: without the freezes the helpers find the device there (about a
  // thousand sightings in 200 rounds on an idle development machine).
  if (!freeze) CHECK(seen > 0);
}

TEST_CASE("two freezes that cover one task neither wait for each other nor lose a stop", "[tracer][freeze]") {
  PatientFreezeFixture patient;
  auto& [f, probe] = patient;
  TesteeRun run = RunTestee({"freeze-overlap", "/dev/infiniband/uverbs0", "300"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(run.exit_code() == 0);
  CHECK(run["sibling"] == "0");
  CHECK(run["opened"] == "300");
  CHECK(run["other"] == "0");
  CHECK(run["vfork_failed"] == "0");
  CHECK(run.Number("vfork_rounds") > 0);
  CHECK(run.stats.freeze_failures == 0);
  CHECK(probe.failed == 0);
  CHECK(probe.image_changed == 0);
}

TEST_CASE("a vfork child and its sleeping parent do not hold up a freeze", "[tracer][freeze]") {
  PatientFreezeFixture patient;
  auto& [f, probe] = patient;
  TesteeRun run = RunTestee({"freeze-vfork", "/dev/infiniband/uverbs0", "20"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run["enotty"] == "20");
  CHECK(run["vfork_child"] == "0");  // its own ioctl, as the freezing caller, worked too
  CHECK(probe.calls == 21);
  CHECK(run.stats.freezes == 21);
  CHECK(run.stats.freeze_failures == 0);
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
}

TEST_CASE("an exited main thread does not hold up a freeze", "[tracer][freeze]") {
  PatientFreezeFixture patient;
  auto& [f, probe] = patient;
  TesteeRun run = RunTestee({"freeze-leader-exit", "/dev/infiniband/uverbs0", "20"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run.exit_code() == 0);
  CHECK(run["enotty"] == "20");
  CHECK(run.stats.freezes == 20);
  CHECK(run.stats.freeze_failures == 0);
  // The zombie leader (past its PTRACE_EVENT_EXIT stop) is never interrupted or waited for.
  CHECK(run.stats.freeze_interrupts == 0);
}

// Fails the test (instead of hanging it) when a run is not over in time.
class HangGuard {
 public:
  explicit HangGuard(std::chrono::seconds limit) : thread_([this, limit] {
    std::unique_lock lock(mutex_);
    if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
      std::fprintf(stderr, "the harness hung: still running after %lld s\n",
                   static_cast<long long>(limit.count()));
      std::abort();
    }
  }) {}
  ~HangGuard() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

TEST_CASE("a caller killed inside its frozen syscall leaves nothing frozen", "[tracer][freeze]") {
  // The main thread (the thread-group leader, whose death the kernel reports only after every
  // other thread's) is the caller; 3 helpers spin. On the 10th ioctl the whole process is
  // SIGKILLed: before KernelScratch (the caller may vanish while the others are being stopped:
  // ESRCH) or after it (the caller has no exit stop; the helpers are held at the time).
  const bool before = GENERATE(true, false);
  INFO("killed " << (before ? "before" : "after") << " KernelScratch");
  Fixture f;
  FreezeProbe probe;
  probe.Install(f.factory);
  int ioctls = 0;
  f.factory.on_entry = [&](const SyscallView& call, TraceeAccess& tracee) {
    if (call.nr != SYS_ioctl || ++ioctls != 10) return probe.Entry(call, tracee);
    if (before) kill(call.tgid, SIGKILL);
    EntryDecision decision = probe.Entry(call, tracee);
    if (!before) kill(call.tgid, SIGKILL);
    return decision;
  };
  HangGuard guard(std::chrono::seconds(60));
  TesteeRun run = RunTestee({"freeze-spin", "/dev/infiniband/uverbs0", "50", "3"}, f.options);
  INFO(run.out << run.errors);
  CHECK(run.term_signal() == SIGKILL);
  CHECK(ioctls == 10);
  CHECK(run.stats.freezes >= 9);
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
  if (before) {
    // Either the freeze was complete before the caller's death was seen, or it gave up.
    CHECK(run.stats.freeze_failures == probe.scratch_errors.size());
    for (int e : probe.scratch_errors) CHECK(e == ESRCH);
  } else {
    CHECK(run.stats.freeze_failures == 0);
  }
}

// A run of the testee under a FreezeProbe; the test fails (instead of hanging) if it is not
// over within `limit`.
struct ProbedRun {
  FreezeProbe probe;
  TesteeRun run;
};
ProbedRun RunProbed(std::vector<std::string> args, std::chrono::seconds limit) {
  Fixture f;
  ProbedRun probed;
  probed.probe.Install(f.factory);  // its hooks live in f.factory: used up by the return
  HangGuard guard(limit);
  probed.run = RunTestee(std::move(args), f.options);
  return probed;
}

TEST_CASE("an exec by another thread ends a freeze without a hang", "[tracer][freeze]") {
  const auto [probe, run] =
      RunProbed({"freeze-exec", "/dev/infiniband/uverbs0"}, std::chrono::seconds(60));
  INFO(run.out << run.errors);
  CHECK(run.exit_code() == 0);  // the exec'd program's
  CHECK(probe.calls > 0);
  CHECK(run.stats.freezes > 0);
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
}

TEST_CASE("freezes survive thread churn, forks, vforks, signals, group-stops and blocked syscalls", "[tracer][freeze]") {
  Fixture f;
  FreezeProbe probe;
  probe.Install(f.factory);
  const std::string pidfile = f.tree.root + "/stress.pid";
  // The testee runs in its own process group; if it is not done in 3 minutes, it is killed and
  // the test fails instead of hanging.
  std::atomic<bool> done{false}, killed{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 1800 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done) return;
    killed = true;
    pid_t pid = 0;
    std::ifstream(pidfile) >> pid;
    if (pid > 1) kill(-pid, SIGKILL);
  });
  TesteeRun run = RunTestee({"freeze-stress", "/dev/infiniband/uverbs0", "300", pidfile}, f.options);
  done = true;
  watchdog.join();
  INFO(run.out << run.errors);
  REQUIRE_FALSE(killed);
  CHECK(run.exit_code() == 0);
  CHECK(run["scratch_found"] == "1");
  CHECK(run["bad"] == "0");  // every ioctl answered ENOTTY, children exited 0, sleeps and reads restarted
  CHECK(run["ioctls"] == "2400");
  CHECK(run.Number("forks") > 0);
  CHECK(run.Number("churned") > 0);
  CHECK(run.Number("sleeps") > 0);
  CHECK(run.Number("pipe_messages") > 0);
  CHECK(run.Number("stop_cycles") > 0);
  CHECK(run.Number("signals") > 0);
  CHECK(probe.failed == 0);
  CHECK(probe.counter_moved == 0);
  CHECK(probe.image_changed == 0);
  CHECK(run.stats.freezes > 0);
  CHECK(run.stats.held_stops > 0);
  CHECK(run.stats.freeze_failures == 0);
  // A vfork child that died before its creator's event once stayed tracked: every later freeze
  // waited 20 ms for it, and this test took 30-50 s instead of half a second.
  CHECK(run.stats.tasks_left_over == 0);
}

TEST_CASE("a child that dies before its creator's fork event is not tracked again", "[tracer][freeze]") {
  // The creator's PTRACE_EVENT_VFORK / _FORK stop is often held in a freeze of its address
  // space while the child, adopted from its own first stop, execs or exits and is reaped. When
  // the event is handled at last, its child is gone: tracked again, it would be a task that
  // never reports a stop -- every later freeze of the mm would wait for it (kSlowCheckAfter, or
  // for ever had it not been a zombie), and its tid, once reused, would be taken for it.
  // The race is usual but not certain: up to three runs until one has it to lose.
  const auto race = [] {
    return RunProbed({"freeze-child-race", "/dev/infiniband/uverbs0", "40", "8"},
                     std::chrono::seconds(120));
  };
  auto probed = race();
  for (int again = 0; again < 2 && probed.run.stats.early_children == 0; ++again)
    probed = race();
  const auto& [probe, run] = probed;
  INFO(run.out << run.errors);
  CHECK(run.exit_code() == 0);
  CHECK(run["children_bad"] == "0");
  CHECK(run.stats.freezes > 0);
  CHECK(run.stats.early_children > 0);  // the race was there to lose
  CHECK(run.stats.tasks_left_over == 0);
  CHECK(probe.failed == 0);
}

TEST_CASE("a new task that execs or dies before its creator's event is tracked once", "[tracer]") {
  // The orders the test above needs luck for, made certain: each fork/vfork/clone event is held
  // until its child has exec'd or is gone (hold_creator_events).
  Fixture f;
  f.options.hold_creator_events = true;
  TesteeRun forked = RunTestee({"fork-many", "12"}, f.options);
  CHECK(forked["sum"] == std::to_string(11 * 12 / 2));
  CHECK(forked.stats.early_children == 12);
  CHECK(forked.stats.tasks_left_over == 0);  // no dead child tracked again
  TesteeRun threads = RunTestee({"threads", "6"}, f.options);
  CHECK(threads["threads"] == "6");
  CHECK(threads.stats.early_children == 6);
  CHECK(threads.stats.tasks_left_over == 0);
  // A vfork child that exec'd before its creator's event (its exec releases the event): the
  // parent is out of wait_for_vfork_done at once, and the child is tracked once.
  TesteeRun vforked = RunTestee({"vfork-exec"}, f.options);
  CHECK(vforked["child"] == "5");
  CHECK(vforked.stats.early_children == 1);
  CHECK(vforked.stats.tasks_left_over == 0);
}

TEST_CASE("a refused open closes the fd in the tracee", "[tracer]") {
  Fixture f;
  f.factory.refuse_open = Fail(EPERM, "policy refuses this device");
  TesteeRun run = RunTestee({"open", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(run["fd"] == "-EPERM");
  CHECK(run.errors.find("policy refuses this device") != std::string::npos);
  CHECK(f.factory.record.closes.empty());
}

TEST_CASE("new credentials after a proxied open are told to the factory, also from a no-op that commits", "[tracer]") {
  Fixture f;
  TesteeRun run = RunTestee({"credentials", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(InRange(run["fd"]));
  CHECK(run["noop_before_open"] == "0");
  // Not told: a no-op setresuid (no /dev/infiniband to ask here, so the 6.3+ rule holds), a
  // setfsuid query, and the queries sharing prctl and keyctl.
  CHECK(run["noop_setresuid"] == "0");
  CHECK(run["setfsuid_query"] == "0");
  // Told although nothing changes: __sys_setuid and PR_SET_KEEPCAPS always commit.
  CHECK(run["noop_setuid"] == "0");
  CHECK(run["noop_keepcaps"] == "0");
  // As root (CI) the capability drop succeeds; unprivileged, a user namespace usually does.
  const int changes = 2 + (run["capbset_drop"] == "0") + (run["userns"] == "0");
  int told = 0;
  for (const auto& e : f.factory.record.events) told += e.kind == ProcessEvent::Kind::kCredentials;
  CHECK(told == changes);
  // Only after the open (the device filter): setresuid, setfsuid, the prctl and keyctl
  // queries, setuid, keepcaps, the bounding-set drop; unshare has its tag.
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kCredentials)] == 7);
  CHECK(run.stats.by_intercept[static_cast<size_t>(Intercept::kUnshare)] == 1);
}

// The testee's StepWriter steps: write length -> the writer's credentials.
std::map<uint64_t, uint64_t> CredentialsByStep(const RecordingFactory& factory) {
  std::map<uint64_t, uint64_t> by_step;
  for (const SyscallView& e : factory.record.entries)
    if (e.nr == SYS_write) by_step[e.args[2]] = e.credentials;
  return by_step;
}

TEST_CASE("each thread's calls carry its credentials as the kernel's struct cred tells them apart", "[tracer]") {
  Fixture f;
  TesteeRun run = RunTestee({"thread-credentials", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(InRange(run["fd"]));
  CHECK(run["child"] == "0");
  REQUIRE(f.factory.record.opens.size() == 1);
  std::map<uint64_t, uint64_t> by_step = CredentialsByStep(f.factory);
  REQUIRE(by_step.size() == 6);
  const uint64_t opener = f.factory.record.opens[0].credentials;
  CHECK(opener != 0);
  CHECK(by_step[1] == opener);
  CHECK(by_step[2] == opener);      // a thread shares its creator's (copy_creds)
  CHECK(by_step[3] != opener);      // after its own no-op setuid (commit_creds)
  CHECK(by_step[4] == by_step[3]);  // its thread shares the new ones
  CHECK(by_step[5] == opener);      // the other threads keep theirs
  CHECK(by_step[6] != opener);      // a fork child has its own
  CHECK(by_step[6] != by_step[3]);
}

TEST_CASE("a thread's own new credentials outlive its creator's late clone event", "[tracer]") {
  // The thread's stops, its setuid included, come before its creator's clone event (held back
  // until the commit): the event, when handled, must not give it its creator's credentials.
  Fixture f;
  f.options.hold_creator_events = true;
  TesteeRun run = RunTestee({"thread-credentials-early", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  REQUIRE(InRange(run["fd"]));
  CHECK(run.stats.early_children == 1);  // adopted at its own first stop
  REQUIRE(f.factory.record.opens.size() == 1);
  std::map<uint64_t, uint64_t> by_step = CredentialsByStep(f.factory);
  REQUIRE(by_step.size() == 4);
  const uint64_t opener = f.factory.record.opens[0].credentials;
  CHECK(by_step[1] == opener);
  CHECK(by_step[2] == opener);
  CHECK(by_step[3] != opener);  // kept after the creator's event
  CHECK(by_step[4] == opener);
}

TEST_CASE("fork shares the open file and exec keeps only non-cloexec fds", "[tracer]") {
  Fixture f;
  TesteeRun forked = RunTestee({"fork-device", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(forked["child"] == "0");
  CHECK(forked["read"] == "0");
  CHECK(f.factory.record.CountCalls(SYS_read) == 2);
  CHECK(f.factory.record.closes.size() == 1);  // the last of the two processes closed it
  bool saw_fork = false;
  for (const auto& e : f.factory.record.events) saw_fork = saw_fork || e.kind == ProcessEvent::Kind::kFork;
  CHECK(saw_fork);

  RecordingFactory exec_factory;
  f.options.factory = &exec_factory;
  TesteeRun execd = RunTestee({"exec-keep", "/dev/infiniband/uverbs0"}, f.options);
  INFO(execd.out << execd.errors);
  CHECK(execd["read"] == "0");  // the kept fd is still proxied in the new program
  CHECK(exec_factory.record.CountCalls(SYS_read) == 1);
  // The new program has new credentials (prepare_exec_creds): the kept file's opener had others.
  REQUIRE(exec_factory.record.opens.size() == 2);
  for (const SyscallView& e : exec_factory.record.entries)
    if (e.nr == SYS_read) CHECK(e.credentials != exec_factory.record.opens[0].credentials);
  CHECK(exec_factory.record.opens[0].credentials == exec_factory.record.opens[1].credentials);
  REQUIRE(exec_factory.record.closes.size() == 2);
  CHECK(exec_factory.record.closes[0] == CloseReason::kExec);
  CHECK(exec_factory.record.closes[1] == CloseReason::kExit);
}

TEST_CASE("close_range and CLONE_FILES siblings update the fd model", "[tracer]") {
  Fixture f;
  TesteeRun ranged = RunTestee({"close-range", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(ranged["close_range"] == "0");
  CHECK(ranged["fd_open_after"] == "-EBADF");
  CHECK(InRange(ranged["reopen"]));
  REQUIRE(f.factory.record.closes.size() == 2);
  CHECK(f.factory.record.closes[0] == CloseReason::kClosed);

  RecordingFactory clone_factory;
  f.options.factory = &clone_factory;
  TesteeRun cloned = RunTestee({"clone-files", "/dev/infiniband/uverbs0"}, f.options);
  CHECK(cloned["child"] == "9");
  CHECK(cloned["read_after_child_close"] == "-EBADF");
  REQUIRE(clone_factory.record.closes.size() == 1);
  CHECK(clone_factory.record.closes[0] == CloseReason::kClosed);
  CHECK(clone_factory.record.CountCalls(SYS_read) == 0);
}

TEST_CASE("reopening through /proc/self/fd is another proxied open", "[tracer]") {
  Fixture f;
  TesteeRun run = RunTestee({"proc-reopen", "/dev/infiniband/uverbs0"}, f.options);
  INFO(run.out << run.errors);
  CHECK(InRange(run["fd"]));
  CHECK(run["target"] == "/dev/infiniband/uverbs0");  // the sandbox name, not the host's
  CHECK(InRange(run["reopen"]));
  CHECK(f.factory.record.opens.size() == 2);
}

TEST_CASE("termination signals sent to the harness reach the program", "[tracer]") {
  Fixture f;
  const std::string ready = f.tree.root + "/ready";
  std::thread sender([&] {
    // Up to 120 s for the program to start on a loaded machine.
    for (int i = 0; i < 12'000 && access(ready.c_str(), F_OK) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(getpid(), SIGTERM);
  });
  TesteeRun run = RunTestee({"wait-signal", ready}, f.options);
  sender.join();
  CHECK(run["signal"] == std::to_string(SIGTERM));
  CHECK(run.exit_code() == 0);
}

// A signal sent to the harness once the first program is on its way out, but not yet reaped,
// reaches what is left of the tree: the child sends it when it sees the program exiting
// (PF_EXITING, set after PTRACE_EVENT_EXIT) and must get it back. Deterministic with the
// fix: the harness switches at that event, before the program can show PF_EXITING. Before
// it, the signal went to the dying program's pid until the reap (the program's 512 MiB take a
// while to free) and was lost: the child then reported 0 (12 of 12 rounds, fix reverted).
TEST_CASE("a signal sent while the first program exits reaches the rest of the tree", "[tracer]") {
  Fixture f;
  for (int round = 0; round < 3; ++round) {
    TesteeRun run = RunTestee({"exit-leaves-child", std::to_string(getpid()), "512"}, f.options);
    INFO("round " << round << ": " << run.out << run.errors);
    CHECK(run.exit_code() == 0);
    CHECK(run["child_signal"] == std::to_string(SIGTERM));
    // "gone": the child only looked after the reap, so this round did not reach the window.
    CHECK((run["child_saw"] == "exiting" || run["child_saw"] == "gone"));
  }
}

TEST_CASE("a termination signal before the launch ends the run without starting the program",
          "[tracer]") {
  Fixture f;
  const std::string marker = f.tree.root + "/started";
  struct sigaction before{};
  sigaction(SIGTERM, nullptr, &before);
  {
    // The caller's forwarding, made before its own set-up; the signal comes during the set-up.
    SignalForwarding signals;
    kill(getpid(), SIGTERM);
    f.options.signals = &signals;
    TesteeRun run = RunTestee({"wait-signal", marker}, f.options);  // creates marker first
    CHECK(run.term_signal() == SIGTERM);  // reported as the program killed by it
    CHECK_FALSE(fs::exists(marker));       // which never ran
    CHECK(signals.TakePending() == 0);
    // Afterwards, signals are kept for the caller, not sent to the finished program's pid.
    kill(getpid(), SIGHUP);
    CHECK(signals.TakePending() == SIGHUP);
  }
  // The old disposition is back.
  struct sigaction now{};
  sigaction(SIGTERM, nullptr, &now);
  CHECK(reinterpret_cast<void*>(now.sa_sigaction) == reinterpret_cast<void*>(before.sa_sigaction));
  // Without a pending signal the program runs.
  SignalForwarding signals;
  f.options.signals = &signals;
  CHECK(RunTestee({"exit", "7"}, f.options).exit_code() == 7);
}

// Signals kept before the program runs (as during its launch) are all passed on once it runs,
// not only the last one.
TEST_CASE("every signal kept before the launch reaches the program", "[tracer]") {
  int ready[2], report[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(report) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    sigprocmask(SIG_BLOCK, &both, nullptr);
    (void)!write(ready[1], "r", 1);
    char got[2] = {'-', '-'};
    const timespec limit{60, 0};
    for (int i = 0; i < 2; ++i) {
      const int sig = sigtimedwait(&both, nullptr, &limit);
      if (sig == SIGUSR1) got[0] = '1';
      if (sig == SIGUSR2) got[1] = '2';
    }
    (void)!write(report[1], got, 2);
    _exit(0);
  }
  close(ready[1]);
  close(report[1]);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  {
    SignalForwarding signals;
    kill(getpid(), SIGUSR1);  // handled before kill returns: this thread does not block them
    kill(getpid(), SIGUSR2);
    signals.ForwardTo(child);
    char got[3] = {};
    CHECK(read(report[0], got, 2) == 2);
    CHECK(std::string(got) == "12");
    CHECK(signals.TakePending() == 0);
    signals.StopForwarding();
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  close(report[0]);
}

TEST_CASE("the harness keeps no fd of its own after a run", "[tracer]") {
  Fixture f;
  const int before = testing::OpenFdCount();
  for (const char* scenario : {"device", "fork-device", "exec-keep", "scm-rights", "proc-reopen"})
    RunTestee({scenario, "/dev/infiniband/uverbs0"}, f.options);
  RunTestee({"threads", "8"}, f.options);
  RunTestee({"openat", "/rxp-sandbox/a", "file"}, f.options);
  CHECK(testing::OpenFdCount() == before);
}

}  // namespace
}  // namespace rxp::harness
