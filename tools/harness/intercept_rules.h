// What stops, in one table: the harness's seccomp rules and how the tracer decodes each stop.
//
// Two filters. The base filter is installed before exec and stays for the life of every
// tracee; the device filter is added to a process (by the tracer, with an injected seccomp()
// and SECCOMP_FILTER_FLAG_TSYNC) when it gets its first proxied fd, and is inherited by its
// children and across exec. A process that never opens an RDMA device therefore never runs the
// fd-range checks on its read/write/close/... (they would cost every such syscall a BPF run).
//
// These syscalls stop (SECCOMP_RET_TRACE, tagged with an Intercept):
//   * (device filter) syscalls that name a reserved-range fd (kFdSyscalls): the proxied file's
//     handler runs; dup/dup2/dup3/fcntl(F_DUPFD*)/close/close_range keep proxied fds inside
//     the range and the fd model in step;
//   * (base) RDMA_VERBS_IOCTL on any fd, so a uverbs fd that escaped the range (SCM_RIGHTS,
//     pidfd_getfd from outside, ...) cannot issue an unchecked verbs command;
//   * (base) path lookups (kPathSyscalls), for /dev/infiniband and /sys redirection;
//   * (device filter) sendmsg/sendmmsg, so a proxied fd is not handed to another process
//     over a unix socket (SCM_RIGHTS), where it would escape the harness;
//   * (device filter) io_submit, whose iocbs name fds the filter cannot see;
//   * (device filter) the calls that can give a process new credentials (credential_calls.h:
//     set*id, setgroups, capset, setns, prctl and keyctl operations; unshare(CLONE_NEWUSER)
//     above): the kernel refuses a write() to a uverbs or rdma_cm file from credentials other
//     than the opener's, and the tracer notes a commit (tracer_credentials.cc);
//   * (base) socket(AF_NETLINK, *, NETLINK_RDMA): the new socket moves into the range, where
//     every request it sends is filtered (netlink_rdma.h).
//   * (base) a new RLIMIT_NOFILE (setrlimit, prlimit64 with a new limit): a hard limit below
//     the range's end is kept at that end (nofile_limit.h);
//   * (nofile filter) a query of RLIMIT_NOFILE (getrlimit, prlimit64 with only an old limit),
//     in a process whose hard limit was kept so: it is shown as the program set it;
//   * (base) seccomp(SECCOMP_SET_MODE_FILTER) with SECCOMP_FILTER_FLAG_NEW_LISTENER, and
//     clone(CLONE_UNTRACED), and (device filter) remap_file_pages: refused with a logged
//     reason; tracer_bypasses.cc says why each is a route around the tracer.
// A few are answered by the base filter alone, without a stop (SECCOMP_RET_ERRNO):
//   * socket(AF_NETLINK, *, NETLINK_RDMA) -> EPROTONOSUPPORT instead, with
//     NetlinkRdmaMode::kRefused (`rdmaproxy run --refuse-netlink`): libibverbs then falls back
//     to sysfs enumeration for everything (rdma-core ibverbs_get_device_list);
//   * io_uring_setup -> ENOSYS (io_uring requests bypass seccomp entirely);
//   * pidfd_getfd of a reserved-range fd -> EPERM;
//   * clone3 -> ENOSYS: its flags are in memory, where the filter cannot see CLONE_UNTRACED;
//     glibc then falls back to clone (clone_internal.c), whose flags are a register.
// The program may add seccomp filters of its own; a stop's tag is then not taken on trust
// (seccomp_run.h).
// Everything else runs at native speed. docs/harness.md lists the table for users.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tools/harness/fd_range.h"
#include "tools/harness/path_resolver.h"
#include "tools/harness/seccomp_filter.h"

namespace rxp::harness {

// The SECCOMP_RET_DATA tag of each TRACE rule: which dispatcher handles the stop.
enum class Intercept : uint16_t {
  kFdSyscall = 1,  // read/write/ioctl/mmap/... on a reserved-range fd
  kVerbsIoctl,     // ioctl(RDMA_VERBS_IOCTL) on any fd
  kDup,            // dup(range fd)
  kDupTo,          // dup2/dup3 with the old or the new fd in the range
  kFcntlDup,       // fcntl(range fd, F_DUPFD / F_DUPFD_CLOEXEC, min)
  kClose,          // close(range fd)
  kCloseRange,     // close_range overlapping the range
  kUnshare,        // unshare(CLONE_FILES or CLONE_NEWUSER): a new fd table, new credentials
  kPath,           // a path lookup (kPathSyscalls)
  kSendFds,        // sendmsg/sendmmsg of a process that holds proxied fds (SCM_RIGHTS check)
  kNetlinkSocket,  // socket(AF_NETLINK, *, NETLINK_RDMA)
  kAioSubmit,      // io_submit of a process that holds proxied fds (iocb fd check)
  kNofileLimit,    // setrlimit/prlimit64 setting RLIMIT_NOFILE (nofile_limit.h)
  kSeccompFilter,  // seccomp(SET_MODE_FILTER) / prctl(PR_SET_SECCOMP, MODE_FILTER): a filter
                   // of the program's own (a listener is refused; the process is noted)
  kUntracedClone,  // clone(CLONE_UNTRACED): a child the harness would not trace
  kRemapFilePages,  // remap_file_pages of a process that holds proxied fds
  kScratchGuard,   // mprotect/munmap/madvise/mremap/mmap(MAP_FIXED)/shmat(SHM_REMAP) that may
                   // reach the scratch region, where it sits at a fixed address (ScratchWindow)
  kGetcwd,         // getcwd: a cwd inside a redirected directory is named as the sandbox sees it
  kStrictMode,     // a call strict mode forbids, in a thread that entered it (StrictModeFilter)
  kNofileQuery,    // getrlimit/prlimit64 reading RLIMIT_NOFILE, where the hard limit was kept
  kCredentials,    // a call of credential_calls.h (set*id, setgroups, capset, setns, prctl and
                   // keyctl operations) of a process that holds proxied fds (tracer_credentials.cc)
  kProcessVmWrite,  // process_vm_writev: none into a scratch region (tracer_process_vm.cc)
  kCount,
};
const char* InterceptName(Intercept tag);

// RDMA_VERBS_IOCTL: _IOWR(RDMA_IOCTL_MAGIC 0x1b, 1, struct ib_uverbs_ioctl_hdr (24 bytes)),
// include/uapi/rdma/rdma_user_ioctl_cmds.h.
inline constexpr uint32_t kRdmaVerbsIoctl = 0xc0181b01;
// NETLINK_RDMA, include/uapi/linux/netlink.h.
inline constexpr int kNetlinkRdma = 20;

// A syscall whose fd argument makes it a proxied-file call.
struct FdSyscall {
  long nr;
  int fd_arg;  // which argument is the fd (mmap: 4)
};
std::span<const FdSyscall> FdSyscalls();
const FdSyscall* FindFdSyscall(long nr);

// A path lookup the harness redirects.
struct PathSyscall {
  long nr;
  int dirfd_arg;           // -1: relative to the cwd (the non-*at variants)
  int path_arg;
  PathOp op;
  int flags_arg;           // -1: none (openat2: flags live in struct open_how)
  uint64_t nofollow_flag;  // the bit in flags that means "do not follow the last symlink"
  bool never_follows;      // lstat, readlink: the last component is never followed
  uint64_t empty_path_flag;  // AT_EMPTY_PATH: with it the call is fd-based and does not stop
};
std::span<const PathSyscall> PathSyscalls();
const PathSyscall* FindPathSyscall(long nr);

// What a NETLINK_RDMA socket is under the harness.
enum class NetlinkRdmaMode {
  kFiltered,  // the program's own socket; its requests filtered (netlink_rdma.h)
  kRefused,   // socket() fails with EPROTONOSUPPORT, as on a kernel without RDMA netlink
};

// Where the harness maps an address space's scratch region (address_space.h) when it cannot
// seal it -- a kernel without mseal(2), or a process with seccomp filters of its own, which
// might kill it for the seal: at a fixed, low address, so that a filter can stop the calls
// that could unprotect or replace it -- any whose address is below its end (nothing else lives
// there; a range starting below it could still reach it).
struct ScratchWindow {
  uint64_t base = 0;
  uint64_t end() const;
};

// The base filter's rules: installed in the first tracee before exec. With `scratch`, the
// calls that could change the protection or the mapping of memory below its end stop
// (Intercept::kScratchGuard).
std::vector<FilterRule> BuildBaseRules(const FdRange& range,
                                       NetlinkRdmaMode netlink = NetlinkRdmaMode::kFiltered,
                                       std::optional<ScratchWindow> scratch = std::nullopt);
// The rules that guard the window (Intercept::kScratchGuard): part of the base filter on a
// kernel without mseal; elsewhere a filter of their own, added only to a process whose region
// had to go at the window.
std::vector<FilterRule> BuildGuardRules(const ScratchWindow& scratch);
// The rules that stop a query of RLIMIT_NOFILE (Intercept::kNofileQuery): a filter of their
// own, added only to a process whose hard limit the harness kept above what it set, so that a
// query shows the value set there and costs nothing elsewhere (tracer_limits.cc).
std::vector<FilterRule> BuildNofileQueryRules();
// What SECCOMP_MODE_STRICT allows (kernel/seccomp.c, mode1_syscalls): read, write, exit and
// rt_sigreturn; every other call is SECCOMP_RET_TRACE | kStrictMode. The kernel refuses strict
// mode in a thread that has filters, as every traced thread has, so the harness installs this
// filter in its place and kills a thread that makes another call (OnSeccompFilter).
BpfProgram StrictModeFilter();
bool StrictModeAllows(long nr);
// The device filter's rules: added to a process with its first proxied fd.
std::vector<FilterRule> BuildDeviceRules(const FdRange& range);

}  // namespace rxp::harness
