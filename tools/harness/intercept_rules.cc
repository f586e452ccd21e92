#include "tools/harness/intercept_rules.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

#include "tools/harness/address_space.h"
#include "tools/harness/credential_calls.h"

namespace rxp::harness {
namespace {

using Op = ArgCondition::Op;
constexpr uint64_t kLow32 = 0xffffffffULL;

ArgCondition FdIn(unsigned arg, const FdRange& r) {
  return {arg, Op::kMaskedEq, r.base(), r.mask()};
}
ArgCondition Is32(unsigned arg, uint64_t value) { return {arg, Op::kMaskedEq, value, kLow32}; }
ArgCondition FlagClear(unsigned arg, uint64_t flag) { return {arg, Op::kMaskedEq, 0, flag}; }
ArgCondition FlagSet(unsigned arg, uint64_t flag) { return {arg, Op::kMaskedEq, flag, flag}; }

FilterAction Trace(Intercept tag) {
  return {FilterAction::Kind::kTrace, static_cast<uint16_t>(tag)};
}
FilterAction Errno(int e) { return {FilterAction::Kind::kErrno, static_cast<uint16_t>(e)}; }

// clang-format off
constexpr FdSyscall kFdSyscalls[] = {
  // nr              fd argument
  {SYS_read,         0},
  {SYS_write,        0},
  {SYS_pread64,      0},
  {SYS_pwrite64,     0},
  {SYS_readv,        0},
  {SYS_writev,       0},
  {SYS_preadv,       0},
  {SYS_pwritev,      0},
  {SYS_preadv2,      0},
  {SYS_pwritev2,     0},
  {SYS_ioctl,        0},
  {SYS_mmap,         4},
  // Proxied directories (ordered_listing.h) order what these return.
  {SYS_getdents64,   0},
  {SYS_getdents,     0},
  // A NETLINK_RDMA socket (netlink_rdma.h): its sends are filtered, its address checked, and
  // a receive of an answer the harness gives is emulated (read and readv above too).
  {SYS_sendto,       0},
  {SYS_recvfrom,     0},
  {SYS_recvmsg,      0},
  {SYS_recvmmsg,     0},
  {SYS_bind,         0},
  {SYS_connect,      0},
  {SYS_setsockopt,   0},
  // Writes into a proxied file that do not pass through write()/send*(): sendfile's and
  // splice's output fd.
  {SYS_sendfile,     0},
  {SYS_splice,       2},
};

constexpr PathSyscall kPathSyscalls[] = {
  // nr              dirfd path op                 flags nofollow          never  empty-path
  {SYS_open,         -1,   0,   PathOp::kOpen,     1,    O_NOFOLLOW,          false, 0},
  {SYS_creat,        -1,   0,   PathOp::kOpen,     -1,   0,                   false, 0},
  {SYS_openat,        0,   1,   PathOp::kOpen,     2,    O_NOFOLLOW,          false, 0},
  {SYS_openat2,       0,   1,   PathOp::kOpen,     -1,   O_NOFOLLOW,          false, 0},
  {SYS_stat,         -1,   0,   PathOp::kStat,     -1,   0,                   false, 0},
  {SYS_lstat,        -1,   0,   PathOp::kStat,     -1,   0,                   true,  0},
  {SYS_newfstatat,    0,   1,   PathOp::kStat,     3,    AT_SYMLINK_NOFOLLOW, false, AT_EMPTY_PATH},
  {SYS_statx,         0,   1,   PathOp::kStat,     2,    AT_SYMLINK_NOFOLLOW, false, AT_EMPTY_PATH},
  {SYS_access,       -1,   0,   PathOp::kAccess,   -1,   0,                   false, 0},
  {SYS_faccessat,     0,   1,   PathOp::kAccess,   -1,   0,                   false, 0},
  {SYS_faccessat2,    0,   1,   PathOp::kAccess,   3,    AT_SYMLINK_NOFOLLOW, false, 0},
  {SYS_readlink,     -1,   0,   PathOp::kReadlink, -1,   0,                   true,  0},
  {SYS_readlinkat,    0,   1,   PathOp::kReadlink, -1,   0,                   true,  0},
  {SYS_chdir,        -1,   0,   PathOp::kChdir,    -1,   0,                   false, 0},
};
// clang-format on

}  // namespace

const char* InterceptName(Intercept tag) {
  static constexpr const char* kNames[] = {
      "?",     "fd-syscall", "verbs-ioctl", "dup",  "dup-to",
      "fcntl-dup", "close", "close-range", "unshare", "path", "send-fds",
      "netlink-socket", "aio-submit", "nofile-limit", "seccomp-filter", "untraced-clone",
      "remap-file-pages", "scratch-guard", "getcwd", "strict-mode", "nofile-query",
      "credentials", "process-vm-write",
  };
  const auto i = static_cast<size_t>(tag);
  return i < std::size(kNames) ? kNames[i] : "?";
}

std::span<const FdSyscall> FdSyscalls() { return kFdSyscalls; }

const FdSyscall* FindFdSyscall(long nr) {
  for (const FdSyscall& row : kFdSyscalls)
    if (row.nr == nr) return &row;
  return nullptr;
}

std::span<const PathSyscall> PathSyscalls() { return kPathSyscalls; }

const PathSyscall* FindPathSyscall(long nr) {
  for (const PathSyscall& row : kPathSyscalls)
    if (row.nr == nr) return &row;
  return nullptr;
}

uint64_t ScratchWindow::end() const { return base + AddressSpace::region_size(); }

std::vector<FilterRule> BuildBaseRules(const FdRange& r, NetlinkRdmaMode netlink,
                                       std::optional<ScratchWindow> scratch) {
  const FilterAction on_netlink = netlink == NetlinkRdmaMode::kRefused
                                      ? Errno(EPROTONOSUPPORT)
                                      : Trace(Intercept::kNetlinkSocket);
  // clang-format off
  std::vector<FilterRule> rules = {
    // syscall           conditions (all hold)                                   action
    {SYS_ioctl,          {Is32(1, kRdmaVerbsIoctl)},                             Trace(Intercept::kVerbsIoctl)},
    {SYS_socket,         {Is32(0, AF_NETLINK), Is32(2, kNetlinkRdma)},           on_netlink},
    {SYS_io_uring_setup, {},                                                     Errno(ENOSYS)},
    // A process without proxied fds can still pull one out of a child that has some.
    {SYS_pidfd_getfd,    {FdIn(1, r)},                                           Errno(EPERM)},
    // A lower RLIMIT_NOFILE (glibc's setrlimit is prlimit64(0, ...)); a query (no new limit,
    // getrlimit and sysconf(_SC_OPEN_MAX)) stops only by the nofile filter's rules, in a
    // process whose hard limit was kept (BuildNofileQueryRules).
    {SYS_setrlimit,      {Is32(0, RLIMIT_NOFILE)},                               Trace(Intercept::kNofileLimit)},
    {SYS_prlimit64,      {Is32(1, RLIMIT_NOFILE), {2, Op::kGt, 0}},              Trace(Intercept::kNofileLimit)},
    // Routes around the tracer (intercept_rules.h): a seccomp listener of the program's own,
    // a child created untraced, and clone3, whose flags the filter cannot read. Every filter
    // of the program's own stops, so the tracer knows which processes have one (a filter may
    // refuse the syscalls the tracer injects: tracer_inject.cc, EnsureScratch).
    // Strict mode stops too: the kernel would refuse it (the harness's filters are there), so
    // the tracer installs a filter in its place.
    {SYS_seccomp,        {Is32(0, SECCOMP_SET_MODE_FILTER)},                     Trace(Intercept::kSeccompFilter)},
    {SYS_seccomp,        {Is32(0, SECCOMP_SET_MODE_STRICT)},                     Trace(Intercept::kSeccompFilter)},
    {SYS_prctl,          {Is32(0, PR_SET_SECCOMP)},                              Trace(Intercept::kSeccompFilter)},
    {SYS_clone,          {FlagSet(0, CLONE_UNTRACED)},                           Trace(Intercept::kUntracedClone)},
    {SYS_clone3,         {},                                                     Errno(ENOSYS)},
    // The kernel names the cwd by where it really is: after a chdir into a redirected
    // directory, that is the host path the harness rewrote it to (tracer_path.cc, OnGetcwd).
    {SYS_getcwd,         {},                                                     Trace(Intercept::kGetcwd)},
    // Another process's scratch region, written while that process's ioctl runs from it
    // (tracer_process_vm.cc): any traced process may be the writer.
    {SYS_process_vm_writev, {},                                                  Trace(Intercept::kProcessVmWrite)},
  };
  // clang-format on
  for (const PathSyscall& row : kPathSyscalls) {
    FilterRule rule{row.nr, {}, Trace(Intercept::kPath)};
    if (row.empty_path_flag != 0) {
      const auto flags = static_cast<unsigned>(row.flags_arg);
      rule.conditions.push_back(FlagClear(flags, row.empty_path_flag));
      // fstat is newfstatat(fd, "", AT_EMPTY_PATH) (glibc's fstat64) and must not stop, but
      // with AT_FDCWD there is no fd to stat: the path is looked up as without the flag
      // (vfs_statx() uses it only for an empty name), so that call stops like any lookup.
      // With another dirfd the filter cannot tell fstat from a lookup (it cannot read the
      // string): those stay unchecked (docs/harness.md, "Limits").
      rules.push_back(FilterRule{row.nr,
                                 {FlagSet(flags, row.empty_path_flag),
                                  Is32(static_cast<unsigned>(row.dirfd_arg), static_cast<uint32_t>(AT_FDCWD))},
                                 Trace(Intercept::kPath)});
    }
    rules.push_back(std::move(rule));
  }
  if (scratch) {
    const std::vector<FilterRule> guard = BuildGuardRules(*scratch);
    rules.insert(rules.end(), guard.begin(), guard.end());
  }
  return rules;
}

std::vector<FilterRule> BuildGuardRules(const ScratchWindow& scratch) {
  // What could make the read-only half of the scratch region writable, or put other memory
  // in its place (mm/mprotect.c, mm/mmap.c, mm/mremap.c, mm/madvise.c, ipc/shm.c): every
  // such call whose address lies below the region's end stops, and the tracer refuses the
  // ones whose range reaches it. Programs map nothing that low, so in practice none stop.
  const uint64_t end = scratch.end();
  // clang-format off
  const FilterRule kGuard[] = {
    {SYS_mprotect,      {{0, Op::kLt, end}},                                   Trace(Intercept::kScratchGuard)},
    {SYS_pkey_mprotect, {{0, Op::kLt, end}},                                   Trace(Intercept::kScratchGuard)},
    {SYS_munmap,        {{0, Op::kLt, end}},                                   Trace(Intercept::kScratchGuard)},
    {SYS_madvise,       {{0, Op::kLt, end}},                                   Trace(Intercept::kScratchGuard)},
    {SYS_mremap,        {{0, Op::kLt, end}},                                   Trace(Intercept::kScratchGuard)},
    {SYS_mremap,        {FlagSet(3, MREMAP_FIXED), {4, Op::kLt, end}},         Trace(Intercept::kScratchGuard)},
    {SYS_mmap,          {FlagSet(3, MAP_FIXED), {0, Op::kLt, end}},            Trace(Intercept::kScratchGuard)},
    // The segment's size is not in the call: every SHM_REMAP attach stops.
    {SYS_shmat,         {FlagSet(2, SHM_REMAP)},                               Trace(Intercept::kScratchGuard)},
  };
  // clang-format on
  return {std::begin(kGuard), std::end(kGuard)};
}

std::vector<FilterRule> BuildNofileQueryRules() {
  // glibc's getrlimit is prlimit64(0, resource, NULL, old) (sysdeps/unix/sysv/linux/getrlimit64.c);
  // a prlimit64 with a new limit stops by the base filter's rule already.
  // clang-format off
  return {
    {SYS_getrlimit,  {Is32(0, RLIMIT_NOFILE)},                                  Trace(Intercept::kNofileQuery)},
    {SYS_prlimit64,  {Is32(1, RLIMIT_NOFILE), {2, Op::kEq, 0}, {3, Op::kGt, 0}}, Trace(Intercept::kNofileQuery)},
  };
  // clang-format on
}

bool StrictModeAllows(long nr) {
  return nr == SYS_read || nr == SYS_write || nr == SYS_exit || nr == SYS_rt_sigreturn;
}

BpfProgram StrictModeFilter() {
  constexpr uint32_t kTrace =
      SECCOMP_RET_TRACE | static_cast<uint32_t>(Intercept::kStrictMode);
  return BpfProgram({
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),  // another ABI: trace
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kTrace),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  });
}

std::vector<FilterRule> BuildDeviceRules(const FdRange& r) {
  std::vector<FilterRule> rules;
  // The data syscalls stop in the range's upper half only; the lower half holds event files
  // (FdRange::StoppingHalf). dup, close and the rest below watch the whole range.
  const FdRange stopping = r.StoppingHalf();
  for (const FdSyscall& row : kFdSyscalls)
    rules.push_back({row.nr, {FdIn(static_cast<unsigned>(row.fd_arg), stopping)}, Trace(Intercept::kFdSyscall)});
  // clang-format off
  const FilterRule kFdModel[] = {
    // syscall           conditions (all hold)                                   action
    {SYS_dup,            {FdIn(0, r)},                                           Trace(Intercept::kDup)},
    {SYS_dup2,           {FdIn(0, r)},                                           Trace(Intercept::kDupTo)},
    {SYS_dup2,           {FdIn(1, r)},                                           Trace(Intercept::kDupTo)},
    {SYS_dup3,           {FdIn(0, r)},                                           Trace(Intercept::kDupTo)},
    {SYS_dup3,           {FdIn(1, r)},                                           Trace(Intercept::kDupTo)},
    {SYS_fcntl,          {FdIn(0, r), Is32(1, F_DUPFD)},                         Trace(Intercept::kFcntlDup)},
    {SYS_fcntl,          {FdIn(0, r), Is32(1, F_DUPFD_CLOEXEC)},                 Trace(Intercept::kFcntlDup)},
    {SYS_close,          {FdIn(0, r)},                                           Trace(Intercept::kClose)},
    // close_range(first, last, flags) overlaps [base, end): first < end && last >= base,
    // compared on 64 bits; a first argument with high bits set is truncated by the kernel,
    // so it stops too and the tracer compares the low halves.
    {SYS_close_range,    {{0, Op::kLt, r.end()}, {1, Op::kGe, r.base()}},        Trace(Intercept::kCloseRange)},
    {SYS_close_range,    {{0, Op::kGt, kLow32}},                                 Trace(Intercept::kCloseRange)},
    {SYS_unshare,        {FlagSet(0, CLONE_FILES)},                              Trace(Intercept::kUnshare)},
    {SYS_unshare,        {FlagSet(0, CLONE_NEWUSER)},                            Trace(Intercept::kUnshare)},
    // The control data is in memory: every send with a message header stops (send/sendto
    // cannot carry fds). Only processes that hold proxied fds have this rule.
    {SYS_sendmsg,        {},                                                     Trace(Intercept::kSendFds)},
    {SYS_sendmmsg,       {},                                                     Trace(Intercept::kSendFds)},
    // Asynchronous I/O names its fds inside the iocbs: every submission stops, and one that
    // names a proxied fd is refused (the kernel would write to it without a stop).
    {SYS_io_submit,      {},                                                     Trace(Intercept::kAioSubmit)},
    // It names no fd: it re-runs the mmap of the file behind an existing shared mapping with a
    // new offset, which for a device mapping would skip the offset check of proxied mmaps.
    {SYS_remap_file_pages, {},                                                   Trace(Intercept::kRemapFilePages)},
  };
  // clang-format on
  rules.insert(rules.end(), std::begin(kFdModel), std::end(kFdModel));
  // What can give a process new credentials: ib_safe_file_access refuses such a process's
  // write() to a file it opened before (credential_calls.h, tracer_credentials.cc).
  for (const CredentialCall& call : CredentialCalls()) {
    FilterRule rule{call.nr, {}, Trace(Intercept::kCredentials)};
    if (call.op) rule.conditions.push_back(Is32(0, *call.op));
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace rxp::harness
