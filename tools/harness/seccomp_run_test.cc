#include "tools/harness/seccomp_run.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <map>
#include <vector>

#include "tools/harness/fd_range.h"
#include "tools/harness/intercept_rules.h"

namespace rxp::harness {
namespace {

const FdRange kRange = *FdRange::Make(768, 256);

seccomp_data Call(long nr, std::array<uint64_t, 6> args = {}, uint32_t arch = AUDIT_ARCH_X86_64) {
  seccomp_data data{};
  data.nr = static_cast<int>(nr);
  data.arch = arch;
  for (size_t i = 0; i < 6; ++i) data.args[i] = args[i];
  return data;
}

uint32_t Trace(Intercept tag) { return SECCOMP_RET_TRACE | static_cast<uint32_t>(tag); }

TEST_CASE("the interpreter runs the classic BPF seccomp accepts", "[seccomp]") {
  // A = args[0] low word; X = 3; A = (A + X) * 2 - 1; M[2] = A; A = 0x10; A = M[2];
  // if (A & 0x8) return A ^ 0xf else return 7.
  const std::vector<sock_filter> program = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_STMT(BPF_LDX | BPF_IMM, 3),
      BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
      BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 2),
      BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
      BPF_STMT(BPF_ST, 2),
      BPF_STMT(BPF_LD | BPF_IMM, 0x10),
      BPF_STMT(BPF_LD | BPF_MEM, 2),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x8, 0, 2),
      BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0xf),
      BPF_STMT(BPF_RET | BPF_A, 0),
      BPF_STMT(BPF_RET | BPF_K, 7),
  };
  CHECK(RunSeccompProgram(program, Call(SYS_getppid, {2})) == (((2 + 3) * 2 - 1) ^ 0xf));  // 9: bit 3
  CHECK(RunSeccompProgram(program, Call(SYS_getppid, {0})) == 7);  // 5: no bit 3
  // The high word of args[0] is its own load.
  const std::vector<sock_filter> high = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]) + 4),
      BPF_STMT(BPF_MISC | BPF_TAX, 0),
      BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_X, 0, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 1),
      BPF_STMT(BPF_MISC | BPF_TXA, 0),
      BPF_STMT(BPF_RET | BPF_A, 0),
  };
  CHECK(RunSeccompProgram(high, Call(SYS_getppid, {0x40'0000'0000ULL})) == 1);   // 64 >= 64
  CHECK(RunSeccompProgram(high, Call(SYS_getppid, {0x41'0000'0000ULL})) == 0x41);
}

TEST_CASE("the interpreter refuses what the kernel would not have installed", "[seccomp]") {
  const uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
  // A jump past the end, a program without a final RET, an unaligned or outside load.
  const std::vector<sock_filter> past_end = {BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
                                             BPF_STMT(BPF_RET | BPF_K, 0)};
  CHECK(RunSeccompProgram(past_end, Call(0)) == kKill);
  const std::vector<sock_filter> no_ret = {BPF_STMT(BPF_LD | BPF_IMM, 1)};
  CHECK(RunSeccompProgram(no_ret, Call(0)) == kKill);
  CHECK(RunSeccompProgram({}, Call(0)) == kKill);
  const std::vector<sock_filter> unaligned = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
                                              BPF_STMT(BPF_RET | BPF_K, 0)};
  CHECK(RunSeccompProgram(unaligned, Call(0)) == kKill);
  const std::vector<sock_filter> outside = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(seccomp_data)),
                                            BPF_STMT(BPF_RET | BPF_K, 0)};
  CHECK(RunSeccompProgram(outside, Call(0)) == kKill);
  const std::vector<sock_filter> memory = {BPF_STMT(BPF_ST, BPF_MEMWORDS), BPF_STMT(BPF_RET | BPF_K, 0)};
  CHECK(RunSeccompProgram(memory, Call(0)) == kKill);
  // Packet loads: a byte or half-word, an indirect load, X from the seccomp_data.
  for (int code : {BPF_LD | BPF_B | BPF_ABS, BPF_LD | BPF_H | BPF_ABS, BPF_LD | BPF_W | BPF_IND,
                   BPF_LDX | BPF_W | BPF_ABS, BPF_LDX | BPF_B | BPF_MSH}) {
    const std::vector<sock_filter> load = {BPF_STMT(static_cast<uint16_t>(code), 0),
                                           BPF_STMT(BPF_RET | BPF_K, 0)};
    CHECK(RunSeccompProgram(load, Call(0)) == kKill);
  }
  // Division by a zero X ends the program with 0 (the classic interpreter's answer).
  const std::vector<sock_filter> divide = {BPF_STMT(BPF_LD | BPF_IMM, 8), BPF_STMT(BPF_LDX | BPF_IMM, 0),
                                           BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
                                           BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  CHECK(RunSeccompProgram(divide, Call(0)) == 0);
}

TEST_CASE("a filter stack ranks actions as the kernel does, the newest winning ties", "[seccomp]") {
  auto ret = [](uint32_t value) { return BpfProgram({BPF_STMT(BPF_RET | BPF_K, value)}); };
  const BpfProgram allow = ret(SECCOMP_RET_ALLOW), trace_a = ret(SECCOMP_RET_TRACE | 1),
                   trace_b = ret(SECCOMP_RET_TRACE | 2), notify = ret(SECCOMP_RET_USER_NOTIF),
                   errno_ = ret(SECCOMP_RET_ERRNO | EPERM), kill = ret(SECCOMP_RET_KILL_PROCESS),
                   log = ret(SECCOMP_RET_LOG);
  const seccomp_data any = Call(SYS_getppid);
  CHECK(RunSeccompStack({}, any) == SECCOMP_RET_ALLOW);
  CHECK(RunSeccompStack({&allow, nullptr, &trace_a}, any) == (SECCOMP_RET_TRACE | 1));
  CHECK(RunSeccompStack({&trace_b, &trace_a}, any) == (SECCOMP_RET_TRACE | 2));  // newest first
  CHECK(RunSeccompStack({&trace_a, &trace_b}, any) == (SECCOMP_RET_TRACE | 1));
  CHECK(RunSeccompStack({&trace_a, &notify}, any) == SECCOMP_RET_USER_NOTIF);
  CHECK(RunSeccompStack({&notify, &errno_}, any) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(RunSeccompStack({&log, &trace_a}, any) == (SECCOMP_RET_TRACE | 1));
  CHECK(RunSeccompStack({&errno_, &kill}, any) == SECCOMP_RET_KILL_PROCESS);
}

TEST_CASE("the strict-mode filter allows what SECCOMP_MODE_STRICT allows and stops the rest", "[seccomp]") {
  const BpfProgram strict = StrictModeFilter();
  for (long nr : {SYS_read, SYS_write, SYS_exit, SYS_rt_sigreturn}) {
    INFO(nr);
    CHECK(StrictModeAllows(nr));
    CHECK(RunSeccompProgram(strict.insns(), Call(nr)) == SECCOMP_RET_ALLOW);
  }
  for (long nr : {SYS_exit_group, SYS_getppid, SYS_openat, SYS_mmap, SYS_readv}) {
    INFO(nr);
    CHECK_FALSE(StrictModeAllows(nr));
    CHECK(RunSeccompProgram(strict.insns(), Call(nr)) == Trace(Intercept::kStrictMode));
  }
  seccomp_data other_abi = Call(SYS_read);
  other_abi.arch = AUDIT_ARCH_I386;
  CHECK(RunSeccompProgram(strict.insns(), other_abi) == Trace(Intercept::kStrictMode));
}

TEST_CASE("the harness's compiled filters answer as their rule tables say", "[seccomp]") {
  auto base = CompileFilter(BuildBaseRules(kRange));
  REQUIRE(base.ok());
  auto device = CompileFilter(BuildDeviceRules(kRange));
  REQUIRE(device.ok());
  auto run = [&](const seccomp_data& data) { return RunSeccompStack({&*device, &*base}, data); };
  auto run_base = [&](const seccomp_data& data) { return RunSeccompProgram(base->insns(), data); };
  const uint64_t verbs = kRdmaVerbsIoctl;

  CHECK(run(Call(SYS_getppid)) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_read, {3})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_read, {900})) == Trace(Intercept::kFdSyscall));
  CHECK(run(Call(SYS_read, {0x1'0000'0384ULL})) == Trace(Intercept::kFdSyscall));  // high half ignored
  CHECK(run_base(Call(SYS_read, {900})) == SECCOMP_RET_ALLOW);  // only with the device filter
  CHECK(run(Call(SYS_mmap, {0, 4096, 3, 1, 900, 0})) == Trace(Intercept::kFdSyscall));
  CHECK(run(Call(SYS_mmap, {0, 4096, 3, 1, 3, 0})) == SECCOMP_RET_ALLOW);
  CHECK(run_base(Call(SYS_ioctl, {3, verbs})) == Trace(Intercept::kVerbsIoctl));
  CHECK(run(Call(SYS_ioctl, {900, verbs})) == Trace(Intercept::kFdSyscall));  // the device filter is newer
  CHECK(run(Call(SYS_ioctl, {3, 0x5401})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_openat, {static_cast<uint64_t>(AT_FDCWD), 0, 0})) == Trace(Intercept::kPath));
  CHECK(run(Call(SYS_newfstatat, {3, 0, 0, AT_EMPTY_PATH})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_newfstatat, {3, 0, 0, 0})) == Trace(Intercept::kPath));
  // With AT_FDCWD there is no fd to stat: the flag does not make it fstat.
  const uint64_t cwd = static_cast<uint32_t>(AT_FDCWD);
  CHECK(run(Call(SYS_newfstatat, {cwd, 0, 0, AT_EMPTY_PATH})) == Trace(Intercept::kPath));
  CHECK(run(Call(SYS_newfstatat, {cwd, 0, 0, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW})) == Trace(Intercept::kPath));
  // The dirfd is an int: sign-extended in the register (as glibc passes it) or not, the same.
  CHECK(run(Call(SYS_newfstatat, {static_cast<uint64_t>(AT_FDCWD), 0, 0, AT_EMPTY_PATH})) == Trace(Intercept::kPath));
  CHECK(run(Call(SYS_statx, {cwd, 0, AT_EMPTY_PATH, 0, 0})) == Trace(Intercept::kPath));
  CHECK(run(Call(SYS_statx, {3, 0, AT_EMPTY_PATH, 0, 0})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_close, {800})) == Trace(Intercept::kClose));
  // The range's lower half holds event files: their data syscalls run without a stop, while
  // dup, close, an RDMA_VERBS_IOCTL and pidfd_getfd of them meet the filter as in the upper half.
  const uint64_t event = kRange.base();
  CHECK(run(Call(SYS_read, {event})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_read, {kRange.StoppingHalf().base() - 1})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_read, {kRange.StoppingHalf().base()})) == Trace(Intercept::kFdSyscall));
  CHECK(run(Call(SYS_readv, {event + 1})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_write, {event})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_mmap, {0, 4096, 3, 1, event, 0})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_ioctl, {event, verbs})) == Trace(Intercept::kVerbsIoctl));
  CHECK(run(Call(SYS_close, {event})) == Trace(Intercept::kClose));
  CHECK(run(Call(SYS_dup, {event})) == Trace(Intercept::kDup));
  CHECK(run(Call(SYS_dup3, {3, event, 0})) == Trace(Intercept::kDupTo));
  CHECK(run(Call(SYS_fcntl, {event, F_DUPFD, 0})) == Trace(Intercept::kFcntlDup));
  CHECK(run(Call(SYS_pidfd_getfd, {5, event, 0})) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(run(Call(SYS_io_uring_setup, {4, 0})) == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(run(Call(SYS_pidfd_getfd, {5, 800, 0})) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(run(Call(SYS_socket, {AF_NETLINK, SOCK_RAW, kNetlinkRdma})) == Trace(Intercept::kNetlinkSocket));
  CHECK(run(Call(SYS_seccomp, {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0})) ==
        Trace(Intercept::kSeccompFilter));
  // Every filter of the program's own stops (the tracer notes the process), by either call.
  CHECK(run(Call(SYS_seccomp, {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, 0})) ==
        Trace(Intercept::kSeccompFilter));
  CHECK(run(Call(SYS_prctl, {PR_SET_SECCOMP, SECCOMP_MODE_FILTER, 0})) ==
        Trace(Intercept::kSeccompFilter));
  // Strict mode too: the tracer emulates it (the kernel refuses it to a filtered thread).
  CHECK(run(Call(SYS_prctl, {PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0})) ==
        Trace(Intercept::kSeccompFilter));
  CHECK(run(Call(SYS_seccomp, {SECCOMP_SET_MODE_STRICT, 0, 0})) == Trace(Intercept::kSeccompFilter));
  CHECK(run(Call(SYS_prctl, {PR_SET_NO_NEW_PRIVS, 1, 0})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_seccomp, {SECCOMP_GET_ACTION_AVAIL, 0, 0})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_clone, {CLONE_UNTRACED | SIGCHLD})) == Trace(Intercept::kUntracedClone));
  CHECK(run(Call(SYS_clone, {CLONE_VM | CLONE_THREAD | CLONE_SIGHAND})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_clone3, {0, 88})) == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(run(Call(SYS_remap_file_pages, {0x7000'0000, 4096, 0, 1, 0})) == Trace(Intercept::kRemapFilePages));
  CHECK(run_base(Call(SYS_remap_file_pages, {0x7000'0000, 4096, 0, 1, 0})) == SECCOMP_RET_ALLOW);
  // Another architecture's syscall table: ENOSYS whatever the number.
  CHECK(run(Call(SYS_read, {800}, AUDIT_ARCH_I386)) == (SECCOMP_RET_ERRNO | ENOSYS));
}

TEST_CASE("with a scratch window the base filter stops the calls that could reach it", "[seccomp]") {
  const ScratchWindow window{1 << 20};
  auto base = CompileFilter(BuildBaseRules(kRange, NetlinkRdmaMode::kFiltered, window));
  REQUIRE(base.ok());
  auto run = [&](const seccomp_data& data) { return RunSeccompProgram(base->insns(), data); };
  const uint64_t end = window.end(), high = 0x7f00'0000'0000ULL;
  const uint32_t guard = Trace(Intercept::kScratchGuard);
  for (long nr : {SYS_mprotect, SYS_pkey_mprotect, SYS_munmap, SYS_madvise, SYS_mremap}) {
    INFO(nr);
    CHECK(run(Call(nr, {window.base, 4096, 3})) == guard);
    CHECK(run(Call(nr, {0, 1 << 30, 3})) == guard);  // from below, reaching it
    CHECK(run(Call(nr, {end - 4096, 4096, 3})) == guard);
    CHECK(run(Call(nr, {end, 4096, 3})) == SECCOMP_RET_ALLOW);
    CHECK(run(Call(nr, {high, 4096, 3})) == SECCOMP_RET_ALLOW);
  }
  CHECK(run(Call(SYS_mremap, {high, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, window.base})) == guard);
  CHECK(run(Call(SYS_mremap, {high, 4096, 4096, MREMAP_MAYMOVE, window.base})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_mmap, {window.base, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED})) == guard);
  CHECK(run(Call(SYS_mmap, {window.base, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_mmap, {high, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED})) == SECCOMP_RET_ALLOW);
  CHECK(run(Call(SYS_shmat, {7, high, SHM_REMAP})) == guard);
  CHECK(run(Call(SYS_shmat, {7, 0, SHM_RDONLY})) == SECCOMP_RET_ALLOW);
  // Without a window (the kernel seals the region) none of them stops.
  auto plain = CompileFilter(BuildBaseRules(kRange));
  REQUIRE(plain.ok());
  CHECK(RunSeccompProgram(plain->insns(), Call(SYS_mprotect, {window.base, 4096, 3})) == SECCOMP_RET_ALLOW);
}

// libseccomp's comparisons, as compiled, against the kernel running the same program: in a
// child under a filter whose rules (on syscalls that ignore their arguments) return distinct
// errnos, every argument vector gets what the interpreter predicts. Exit code: mismatches.
TEST_CASE("the interpreter agrees with the kernel on compiled comparisons", "[seccomp]") {
  using Op = ArgCondition::Op;
  // clang-format off
  const std::vector<FilterRule> rules = {
    {SYS_getppid,  {{0, Op::kMaskedEq, 0x1200, 0xff00}},          {FilterAction::Kind::kErrno, 11}},
    {SYS_getuid,   {{1, Op::kGe, 0x1'0000'0000ULL}},               {FilterAction::Kind::kErrno, 12}},
    {SYS_getgid,   {{2, Op::kLt, 5}, {3, Op::kGt, 0xffffffffULL}}, {FilterAction::Kind::kErrno, 13}},
    {SYS_geteuid,  {{4, Op::kEq, 0x1'0000'1200ULL}},               {FilterAction::Kind::kErrno, 14}},
    {SYS_getegid,  {{5, Op::kLe, 0x8000'0000ULL}},                 {FilterAction::Kind::kErrno, 15}},
    {SYS_getpgrp,  {{0, Op::kMaskedEq, 0x1'0000'0000ULL, 0x1'0000'0000ULL}}, {FilterAction::Kind::kErrno, 16}},
  };
  // clang-format on
  auto program = CompileFilter(rules);
  REQUIRE(program.ok());
  const uint64_t values[] = {0, 1, 4, 5, 6, 0x1200, 0x12ff, 0x1300, 0x7fff'ffff, 0x8000'0000,
                             0x8000'0001, 0xffff'ffff, 0x1'0000'0000ULL, 0x1'0000'1200ULL,
                             0xffff'ffff'0000'1200ULL, ~0ULL};
  const long syscalls[] = {SYS_getppid, SYS_getuid, SYS_getgid, SYS_geteuid, SYS_getegid,
                           SYS_getpgrp, SYS_gettid};
  const size_t n = std::size(values);
  auto args_of = [&](size_t i) {
    // Every argument gets a value; two neighbouring ones walk every pair.
    std::array<uint64_t, 6> args{};
    for (size_t a = 0; a < 6; ++a) args[a] = values[(i / (a % 2 == 0 ? 1 : n) + a) % n];
    return args;
  };
  // The cases reach every rule's errno and the default (else agreement would prove little).
  std::map<uint32_t, int> outcomes;
  for (long nr : syscalls)
    for (size_t i = 0; i < n * n; ++i) ++outcomes[RunSeccompProgram(program->insns(), Call(nr, args_of(i)))];
  CHECK(outcomes.size() == 7);
  CHECK(outcomes.count(SECCOMP_RET_ALLOW) == 1);
  const pid_t pid = fork();
  if (pid == 0) {
    if (InstallFilter(program->prog()) != 0) _exit(255);
    int mismatches = 0;
    for (long nr : syscalls) {
      for (size_t i = 0; i < n * n; ++i) {
        const std::array<uint64_t, 6> args = args_of(i);
        const uint32_t predicted = RunSeccompProgram(program->insns(), Call(nr, args));
        const long got = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
        const bool agree = (predicted & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW
                               ? got >= 0
                               : got == -1 && errno == static_cast<int>(predicted & SECCOMP_RET_DATA);
        if (!agree) ++mismatches;
      }
    }
    _exit(mismatches > 250 ? 250 : mismatches);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace rxp::harness
