#include "tools/harness/seccomp_filter.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>

#include "tools/harness/fd_range.h"
#include "tools/harness/intercept_rules.h"

namespace rxp::harness {
namespace {

// Runs `body` in a child under `program` (no tracer: TRACE rules would fail with ENOSYS, so only
// ERRNO/ALLOW rules are exercised here); the child's exit code is body's return value.
int InChild(const BpfProgram& program, const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (InstallFilter(program.prog()) != 0) _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST_CASE("the base and device rules compile", "[seccomp]") {
  const FdRange range = *FdRange::Make(768, 256);
  auto base = CompileFilter(BuildBaseRules(range));
  REQUIRE(base.ok());
  CHECK(base->size() > 20);
  auto device = CompileFilter(BuildDeviceRules(range));
  REQUIRE(device.ok());
  // It is copied into a scratch slot (8 KiB of it) when a process gets its first proxied fd.
  CHECK(device->size() * sizeof(sock_filter) + 16 <= 8192);
}

TEST_CASE("ERRNO rules answer in the filter: netlink RDMA and io_uring", "[seccomp]") {
  const FdRange range = *FdRange::Make(768, 256);
  std::vector<FilterRule> rules;
  for (FilterRule rule : BuildBaseRules(range))
    if (rule.action.kind == FilterAction::Kind::kErrno) rules.push_back(rule);
  auto program = CompileFilter(rules);
  REQUIRE(program.ok());
  CHECK(InChild(*program, [] {
          return socket(AF_NETLINK, SOCK_RAW, kNetlinkRdma) < 0 && errno == EPROTONOSUPPORT ? 0 : 1;
        }) == 0);
  CHECK(InChild(*program, [] {
          // The protocol is an int: garbage in the high half must not slip past.
          long fd = syscall(SYS_socket, AF_NETLINK, SOCK_RAW, (1L << 32) | kNetlinkRdma);
          return fd < 0 && errno == EPROTONOSUPPORT ? 0 : 1;
        }) == 0);
  CHECK(InChild(*program, [] { return socket(AF_NETLINK, SOCK_RAW, 0) >= 0 ? 0 : 1; }) == 0);
  CHECK(InChild(*program, [] {
          return syscall(SYS_io_uring_setup, 4, nullptr) < 0 && errno == ENOSYS ? 0 : 1;
        }) == 0);
}

TEST_CASE("an fd-range condition matches exactly the range, on the low 32 bits", "[seccomp]") {
  const FdRange range = *FdRange::Make(768, 256);
  // Mark the range with an errno nothing else returns.
  FilterRule rule{SYS_close, {{0, ArgCondition::Op::kMaskedEq, range.base(), range.mask()}},
                  {FilterAction::Kind::kErrno, EDOM}};
  auto program = CompileFilter(std::vector<FilterRule>{rule});
  REQUIRE(program.ok());
  auto close_errno = [&](uint64_t fd) {
    return InChild(*program, [fd] {
      return syscall(SYS_close, fd) < 0 ? errno : 0;
    });
  };
  CHECK(close_errno(768) == EDOM);
  CHECK(close_errno(1023) == EDOM);
  CHECK(close_errno((1ULL << 32) | 900) == EDOM);
  CHECK(close_errno(767) == EBADF);
  CHECK(close_errno(1024) == EBADF);
}

TEST_CASE("other syscall ABIs are refused", "[seccomp]") {
  auto program = CompileFilter({});
  REQUIRE(program.ok());
  // An x32 syscall number from a 64-bit process: ENOSYS from the filter (or the kernel).
  CHECK(InChild(*program, [] {
          return syscall(0x40000000L | SYS_getpid) < 0 && errno == ENOSYS ? 0 : 1;
        }) == 0);
}

TEST_CASE("bad rules are reported, not crashed on", "[seccomp]") {
  FilterRule two_on_one_arg{SYS_close,
                            {{0, ArgCondition::Op::kGe, 1, 0}, {0, ArgCondition::Op::kLe, 5, 0}},
                            {FilterAction::Kind::kErrno, EPERM}};
  auto program = CompileFilter(std::vector<FilterRule>{two_on_one_arg});
  REQUIRE_FALSE(program.ok());
  CHECK(program.error().reason.find("close") != std::string::npos);
  FilterRule bad_arg{SYS_close, {{7, ArgCondition::Op::kEq, 1, 0}}, {}};
  CHECK(CompileFilter(std::vector<FilterRule>{bad_arg}).error().errnum == EINVAL);
  CHECK(SyscallName(SYS_openat) == "openat");
}

}  // namespace
}  // namespace rxp::harness
