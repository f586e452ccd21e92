// rxp_harness_testee: small scenarios the harness tests run under the tracer. Each subcommand
// prints "key=value" lines the test parses; errors print "key=-<errno name>".
//
//   exit CODE | raise SIG | threads N | fork | fork-many N | vfork-exec | exec-chain N |
//   exec-from-thread | clone-files PATH | open PATH | device PATH | stat PATH | lstat PATH | access PATH |
//   readlink PATH | openat DIR NAME | chdir-open DIR NAME | list DIR | netlink |
//   syscall-loop N | wait-signal READY_FILE | exit-leaves-child HARNESS_PID MIB | stop-cont | scm-rights PATH [ALIAS] |
//   proc-reopen PATH |
//   close-range PATH | credentials PATH | thread-credentials-early PATH | fork-device PATH | exec-keep PATH | ioctl-verbs FD | io-uring |
//   read-proxied PATH N | write-proxied PATH TEXT N | range-fd-loop N [PATH] | threads-device PATH N | clone-files-late PATH |
//   freeze-spin PATH N HELPERS | freeze-fionbio PATH N HELPERS | freeze-stress PATH ROUNDS PIDFILE | freeze-vfork PATH N |
//   freeze-leader-exit PATH N | freeze-exec PATH | freeze-child-race PATH N HELPERS |
//   open-window PATH N HELPERS threads|processes | freeze-overlap PATH N | reach-tracer |
//   process-vm-write
#include <dirent.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <new>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tools/harness/testdata/scratch_region.h"

namespace {

using rxp_testdata::FindScratchRegion;
using rxp_testdata::kScratchHalf;
using rxp_testdata::kScratchSlotBytes;
using rxp_testdata::kScratchSlotCount;

constexpr unsigned long kRdmaVerbsIoctl = 0xc0181b01;
constexpr int kNetlinkRdma = 20;
const char* g_self = nullptr;

void Print(const char* key, long value) {
  if (value < 0)
    std::printf("%s=-%s\n", key, strerrorname_np(static_cast<int>(-value)));
  else
    std::printf("%s=%ld\n", key, value);
  std::fflush(stdout);
}
long Ret(long r) { return r < 0 ? -errno : r; }

int Threads(int n) {
  std::atomic<int> done{0};
  std::vector<pthread_t> threads(static_cast<size_t>(n));
  for (auto& t : threads) {
    pthread_create(&t, nullptr, [](void* arg) -> void* {
      int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd >= 0) close(fd);
      static_cast<std::atomic<int>*>(arg)->fetch_add(1);
      return nullptr;
    }, &done);
  }
  for (auto& t : threads) pthread_join(t, nullptr);
  Print("threads", done.load());
  return 0;
}

int WaitChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int Fork() {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_RDONLY);
    _exit(fd >= 0 ? 7 : 1);
  }
  Print("child", WaitChild(pid));
  return 0;
}

// N children at once, each a fork that opens a file and exits with its index: whichever of
// the child's first stop and the parent's fork event the tracer sees first, all must finish.
int ForkMany(int n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      close(open("/dev/null", O_RDONLY | O_CLOEXEC));
      _exit(i % 100);
    }
    pids.push_back(pid);
  }
  long sum = 0;
  for (pid_t pid : pids) sum += WaitChild(pid);
  Print("sum", sum);
  return 0;
}

int VforkExec() {
  pid_t pid = vfork();
  if (pid == 0) {
    execl(g_self, g_self, "exit", "5", nullptr);
    _exit(127);
  }
  Print("child", WaitChild(pid));
  return 0;
}

int CloneFiles(const char* path) {
  // A process (not a thread) sharing our fd table: its close must be seen here.
  static char stack[64 * 1024];
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  pid_t pid = clone([](void* arg) -> int {
    close(*static_cast<int*>(arg));
    return 9;
  }, stack + sizeof stack, CLONE_FILES | SIGCHLD, &fd);
  Print("child", WaitChild(pid));
  char buf[1];
  Print("read_after_child_close", Ret(read(fd, buf, 0)));
  return 0;
}

int ExecChain(int n) {
  if (n <= 0) {
    Print("chain_done", 1);
    return 0;
  }
  std::string next = std::to_string(n - 1);
  execl(g_self, g_self, "exec-chain", next.c_str(), nullptr);
  return 127;
}

int ExecFromThread() {
  pthread_t t;
  pthread_create(&t, nullptr, [](void*) -> void* {
    execl(g_self, g_self, "exit", "3", nullptr);
    return nullptr;
  }, nullptr);
  pthread_join(t, nullptr);
  return 99;  // not reached: the exec replaces the whole process
}

int Open(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  Print("fd", Ret(fd));
  return 0;
}

// Opens a device and exercises every way of copying the fd.
int Device(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  if (fd < 0) return 1;
  Print("dup", Ret(dup(fd)));
  Print("dupfd", Ret(fcntl(fd, F_DUPFD, 3)));
  Print("dupfd_cloexec", Ret(fcntl(fd, F_DUPFD_CLOEXEC, 3)));
  Print("dup2_low", Ret(dup2(fd, 10)));
  Print("dup3_high", Ret(dup3(fd, fd + 100 < 1024 ? fd + 100 : fd - 100, O_CLOEXEC)));
  // Calls with the high half of the register set: the kernel uses the low 32 bits.
  Print("dup_highbits", Ret(syscall(SYS_dup, (1L << 32) | fd)));
  // Copies asked for in the range's lower (quiet) half, where a device's calls would not stop;
  // F_DUPFD below its half lands in its half, at or above the number asked.
  Print("dup3_quiet", Ret(dup3(fd, 800, O_CLOEXEC)));
  Print("at_800_after", Ret(fcntl(800, F_GETFD)));
  Print("dupfd_asked_low", Ret(fcntl(fd, F_DUPFD_CLOEXEC, 800)));
  char buf[8];
  Print("read", Ret(read(fd, buf, 0)));
  Print("close", Ret(close(fd)));
  Print("read_closed", Ret(read(fd, buf, 0)));
  return 0;
}

// An opened file whose handler needs no stop for its data syscalls (an event file's): its
// copies land in the range's quiet half, where a read reaches the kernel without a stop.
int QuietCopies(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  if (fd < 0) return 1;
  const int copy = dup(fd);
  Print("dup", Ret(copy));
  Print("dupfd", Ret(fcntl(fd, F_DUPFD_CLOEXEC, 3)));
  char buf[8];
  Print("read_copy", Ret(read(copy, buf, 0)));
  Print("dup3_other_half", Ret(dup3(copy, fd + 1, O_CLOEXEC)));
  return 0;
}

// Lowers RLIMIT_NOFILE to soft/hard (through glibc's setrlimit: prlimit64, or the setrlimit
// syscall itself when `raw`), then opens `path`; prints the limits before and after.
int LowNofile(const char* path, const char* limits, bool raw) {
  rlimit lowered{};
  if (std::sscanf(limits, "%lu/%lu", &lowered.rlim_cur, &lowered.rlim_max) != 2) return 2;
  Print("setrlimit", Ret(raw ? syscall(SYS_setrlimit, RLIMIT_NOFILE, &lowered)
                             : setrlimit(RLIMIT_NOFILE, &lowered)));
  rlimit now{};
  getrlimit(RLIMIT_NOFILE, &now);
  Print("soft", static_cast<long>(now.rlim_cur));
  Print("hard", static_cast<long>(now.rlim_max));
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  Print("dup", Ret(dup(fd)));
  Print("dupfd_below_soft", Ret(fcntl(fd, F_DUPFD, 3)));
  Print("dupfd_at_soft_proxied", Ret(fcntl(fd, F_DUPFD, static_cast<int>(now.rlim_cur))));
  getrlimit(RLIMIT_NOFILE, &now);
  Print("soft_after", static_cast<long>(now.rlim_cur));
  // The program's own fds still meet its soft limit.
  const int plain = open("/dev/null", O_RDONLY | O_CLOEXEC);
  Print("dupfd_at_soft", Ret(fcntl(plain, F_DUPFD, static_cast<int>(now.rlim_cur))));
  return 0;
}

// The hard RLIMIT_NOFILE as a program sees it after lowering it (`ulimit -Hn 256`): queries
// through every call, a raise above it, an invalid request, a child's view and an exec's.
// DROP 1: without CAP_SYS_RESOURCE (which root may have: a raise then succeeds natively too).
// DEVICE: also open it (a proxied fd must still land in the range).
int NofileHard(const char* drop, const char* device) {
  if (std::strcmp(drop, "1") == 0) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[2]{};
    long r = syscall(SYS_capget, &header, caps);
    constexpr unsigned kSysResource = 1u << CAP_SYS_RESOURCE;
    caps[0].effective &= ~kSysResource;
    caps[0].permitted &= ~kSysResource;
    caps[0].inheritable &= ~kSysResource;
    if (r == 0) r = syscall(SYS_capset, &header, caps);
    Print("drop", Ret(r));
  }
  auto show = [](const char* key) {
    rlimit now{};
    if (getrlimit(RLIMIT_NOFILE, &now) != 0) return Print(key, -errno);
    std::printf("%s=%lu/%lu\n", key, now.rlim_cur, now.rlim_max);
    std::fflush(stdout);
  };
  const rlimit lowered{200, 256};
  Print("lower", Ret(setrlimit(RLIMIT_NOFILE, &lowered)));
  show("limits");
  rlimit raw{};
  Print("raw_getrlimit", Ret(syscall(SYS_getrlimit, RLIMIT_NOFILE, &raw)));
  Print("raw_hard", static_cast<long>(raw.rlim_max));
  rlimit old{};
  Print("query", Ret(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &old)));
  Print("query_hard", static_cast<long>(old.rlim_max));
  const rlimit soft_only{210, 256};
  old = {};
  Print("set_soft", Ret(prlimit(0, RLIMIT_NOFILE, &soft_only, &old)));
  Print("set_soft_old_hard", static_cast<long>(old.rlim_max));
  const rlimit soft_above{300, 256};
  Print("soft_above_hard", Ret(setrlimit(RLIMIT_NOFILE, &soft_above)));
  const rlimit raised{210, 300};
  Print("raise", Ret(setrlimit(RLIMIT_NOFILE, &raised)));
  show("after_raise");
  const pid_t child = fork();
  if (child == 0) {
    show("child");
    const rlimit lower_still{100, 128};
    Print("child_lower", Ret(setrlimit(RLIMIT_NOFILE, &lower_still)));
    show("child_after");
    _exit(0);
  }
  WaitChild(child);
  show("parent_after_child");
  if (device[0] != '\0') {
    const int fd = open(device, O_RDWR | O_CLOEXEC);
    Print("fd", Ret(fd));
  }
  std::fflush(stdout);
  execl(g_self, g_self, "nofile-show", nullptr);
  return 1;
}

int NofileShow() {
  rlimit now{};
  Print("exec_getrlimit", Ret(getrlimit(RLIMIT_NOFILE, &now)));
  std::printf("exec_limits=%lu/%lu\n", now.rlim_cur, now.rlim_max);
  return 0;
}

int Stat(const char* path, bool follow) {
  struct stat st{};
  int r = follow ? stat(path, &st) : lstat(path, &st);
  Print("stat", Ret(r));
  if (r == 0) {
    std::printf("ino=%lu\nmode=%o\n", static_cast<unsigned long>(st.st_ino), st.st_mode);
  }
  return 0;
}

int Access(const char* path) {
  Print("access", Ret(access(path, F_OK)));
  return 0;
}

// The routes by which a program could take over the harness that traces it (its parent) with
// the rights of their common user: attach it, read or write its memory, take or reopen its
// descriptors. One line each: "NAME ok" (reached) or "NAME errno E". Exit status 0.
int ReachTracer() {
  const pid_t tracer = getppid();
  auto report = [](const char* name, bool ok) {
    std::printf("%s %s\n", name, ok ? "ok" : (std::string("errno ") + strerrorname_np(errno)).c_str());
  };
  // Attached in a child that exits at once: a tracer's exit detaches its tracees
  // (exit_ptrace()), where a detach would need the parent in a ptrace-stop, and a parent left
  // attached stops at its next signal and waits for its new tracer for ever.
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const bool attached = ptrace(PTRACE_SEIZE, tracer, nullptr, nullptr) == 0;
    report("ptrace_seize", attached);
    std::fflush(stdout);
    _exit(0);
  }
  if (child > 0) waitpid(child, nullptr, 0);
  char byte = 0;
  iovec local{&byte, 1};
  // Any address: the access check comes first (process_vm_rw_core()), so EFAULT means reached.
  iovec remote{reinterpret_cast<void*>(uintptr_t{0x10000}), 1};
  report("process_vm_readv", process_vm_readv(tracer, &local, 1, &remote, 1, 0) >= 0 ||
                                 errno == EFAULT);
  const std::string proc = "/proc/" + std::to_string(tracer);
  const int mem = open((proc + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  report("proc_mem", mem >= 0);
  if (mem >= 0) close(mem);
  DIR* fds = opendir((proc + "/fd").c_str());
  report("proc_fd", fds != nullptr);
  if (fds != nullptr) closedir(fds);
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, tracer, 0));
  const int taken = pidfd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, 0, 0));
  report("pidfd_getfd", taken >= 0);
  if (taken >= 0) close(taken);
  if (pidfd >= 0) close(pidfd);
  return 0;
}

int ReadLink(const char* path) {
  char buf[4096];
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  Print("readlink", Ret(n));
  if (n >= 0) std::printf("target=%.*s\n", static_cast<int>(n), buf);
  return 0;
}

// Prints an open's result and, when it worked, the inode it reached.
int PrintOpened(int fd) {
  Print("fd", Ret(fd));
  if (fd >= 0) {
    struct stat st{};
    fstat(fd, &st);
    std::printf("ino=%lu\n", static_cast<unsigned long>(st.st_ino));
  }
  return 0;
}

int OpenAt(const char* dir, const char* name) {
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  Print("dirfd", Ret(dfd));
  return PrintOpened(openat(dfd, name, O_RDONLY | O_CLOEXEC));
}

int ChdirOpen(const char* dir, const char* name) {
  Print("chdir", Ret(chdir(dir)));
  return PrintOpened(open(name, O_RDONLY | O_CLOEXEC));
}

// chdir-cwd DIR REL: after chdir(DIR), what getcwd says (also with a buffer one byte short),
// and the inode of REL, relative to the new cwd.
int ChdirCwd(const char* dir, const char* rel) {
  Print("chdir", Ret(chdir(dir)));
  char buf[PATH_MAX];
  const long n = syscall(SYS_getcwd, buf, sizeof buf);
  std::printf("cwd=%s\n", n > 0 ? buf : "");
  Print("cwd_len", n < 0 ? -errno : n);
  if (n > 1) Print("cwd_short", Ret(syscall(SYS_getcwd, buf, static_cast<size_t>(n - 1))));
  struct stat st {};
  Print("stat", Ret(stat(rel, &st)));
  Print("ino", static_cast<long>(st.st_ino));
  return 0;
}

int List(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) {
    Print("list", -errno);
    return 0;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  std::printf("entries=%s\n", joined.c_str());
  return 0;
}

// list-raw DIR: the names readdir returns, in its order (without "." and ".."), and the
// fd the directory had (a proxied directory's is in the reserved range).
int ListRaw(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) {
    Print("list", -errno);
    return 0;
  }
  std::string joined;
  while (dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      joined += (joined.empty() ? "" : ",") + std::string(e->d_name);
  std::printf("dirfd=%d\nentries=%s\n", dirfd(d), joined.c_str());
  closedir(d);
  return 0;
}

int Netlink() {
  const int rdma = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, kNetlinkRdma);
  Print("rdma", rdma >= 0 ? 0 : -errno);
  if (rdma >= 0) std::printf("rdma_fd=%d\n", rdma);
  Print("route", Ret(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0)) >= 0 ? 0 : -1);
  return 0;
}

int SyscallLoop(long n) {
  int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  int zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  char buf[64] = {};
  struct stat st{};
  for (long i = 0; i < n; ++i) {
    syscall(SYS_getpid);
    if (write(null_fd, buf, sizeof buf) < 0) return 1;
    if (read(zero_fd, buf, sizeof buf) < 0) return 1;
    fstat(zero_fd, &st);
    ioctl(zero_fd, FIONREAD, &buf);
  }
  Print("loops", n);
  return 0;
}

volatile sig_atomic_t g_signal = 0;

// Tells the test it is ready by creating `ready_file`, then waits for SIGTERM.
int WaitSignal(const char* ready_file) {
  signal(SIGTERM, [](int sig) { g_signal = sig; });
  // SIGTERM stays blocked but inside sigsuspend: with `while (g_signal == 0) pause()` a signal
  // handled between the check and the pause leaves the pause waiting for ever (seen about once
  // in 600 runs on a loaded machine).
  sigset_t term, unblocked;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &unblocked);
  sigdelset(&unblocked, SIGTERM);
  close(open(ready_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  while (g_signal == 0) sigsuspend(&unblocked);
  Print("signal", g_signal);
  return 0;
}

// The first program exits (its exit slowed by a large populated mapping, which exit_mmap
// frees after PTRACE_EVENT_EXIT) and leaves a child behind. The child waits until the
// program is exiting (PF_EXITING in /proc/<pid>/stat, set right after that event: do_exit)
// or gone, sends SIGTERM to the harness, and reports whether the harness passed it on.
// Without the harness forwarding to the rest of the tree from that event on, the signal went
// to the dying program's pid until it was reaped, and was lost.
int ExitLeavesChild(const char* harness_pid, long mib) {
  const pid_t program = getpid();
  const size_t bytes = static_cast<size_t>(mib) << 20;
  void* ballast = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (ballast == MAP_FAILED) {
    Print("mmap", -errno);
    return 1;
  }
  madvise(ballast, bytes, MADV_DONTFORK);  // the program's alone: it frees every page
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, nullptr);  // inherited: the child takes it with sigtimedwait
  const pid_t child = fork();
  if (child < 0) {
    Print("fork", -errno);
    return 1;
  }
  if (child != 0) return 0;  // the program exits with its ballast mapped
  const std::string stat_path = "/proc/" + std::to_string(program) + "/stat";
  const char* saw = "timeout";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    char buf[1024] = {};
    const int fd = open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    const char* paren = n > 0 ? std::strrchr(buf, ')') : nullptr;
    if (paren == nullptr) {
      saw = "gone";
      break;
    }
    // After "(comm)": state, ppid, pgrp, session, tty_nr, tpgid, flags (proc_pid_stat(5)).
    char state = 0;
    unsigned long flags = 0;
    if (std::sscanf(paren + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) == 2 &&
        ((flags & 0x4) != 0 || state == 'Z' || state == 'X')) {  // PF_EXITING
      saw = "exiting";
      break;
    }
    sched_yield();
  }
  std::printf("child_saw=%s\n", saw);
  kill(static_cast<pid_t>(std::atol(harness_pid)), SIGTERM);
  const timespec limit{20, 0};  // it comes at once, or never
  const int sig = sigtimedwait(&term, nullptr, &limit);
  Print("child_signal", sig < 0 ? 0 : sig);
  return 0;
}

int StopCont() {
  pid_t pid = fork();
  if (pid == 0) {
    raise(SIGSTOP);
    _exit(4);
  }
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  Print("stopped", WIFSTOPPED(status) ? WSTOPSIG(status) : -1);
  kill(pid, SIGCONT);
  Print("child", WaitChild(pid));
  return 0;
}

int SendRecvFd(int fd) {
  // Both ends close on every return (a failed recvmsg included).
  struct SocketPair {
    int fds[2] = {-1, -1};
    ~SocketPair() {
      for (int f : fds)
        if (f >= 0) close(f);
    }
  } pair;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair.fds) != 0) return -errno;
  char byte = 'x';
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  if (sendmsg(pair.fds[0], &msg, 0) != 1) return -errno;
  std::memset(control, 0, sizeof control);
  msg.msg_controllen = sizeof control;
  if (recvmsg(pair.fds[1], &msg, MSG_CMSG_CLOEXEC) != 1) return -errno;
  const cmsghdr* got = CMSG_FIRSTHDR(&msg);
  // No fd came with the byte: report it as an error rather than crash on the missing cmsg.
  if (got == nullptr || got->cmsg_type != SCM_RIGHTS) return -EBADMSG;
  int received = -1;
  std::memcpy(&received, CMSG_DATA(got), sizeof received);
  return received;
}

// Passes a proxied fd over a unix socket (refused), an ordinary fd (fine), and the same
// device opened without the harness seeing the path (through a private symlink): its verbs
// ioctl is refused.
int ScmRights(const char* path, const char* alias) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  Print("sent_proxied", SendRecvFd(fd));
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  Print("sent_ordinary", SendRecvFd(null_fd) >= 0 ? 0 : -1);
  Print("ioctl_verbs_proxied", Ret(ioctl(fd, kRdmaVerbsIoctl, nullptr)));
  if (alias[0] != '\0') {
    int low = open(alias, O_RDWR | O_CLOEXEC);
    Print("alias_fd", Ret(low));
    Print("ioctl_verbs_alias", Ret(ioctl(low, kRdmaVerbsIoctl, nullptr)));
  }
  return 0;
}

// A seccomp filter of the program's own that asks for a tracer (RET_TRACE with `tag` as its
// data) on ioctl, openat and getppid, then: a verbs ioctl on the proxied `path`, a redirected
// open (`sandboxed`, expected to read "x"), getppid; a filter with a listener, an untraced
// clone, clone3; and a fork and a thread, which must still work.
int OwnFilter(const char* path, const char* sandboxed, unsigned tag) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | (tag & SECCOMP_RET_DATA)),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(insns)), insns};
  Print("own_filter", Ret(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)));
  Print("ioctl_verbs_proxied", Ret(ioctl(fd, kRdmaVerbsIoctl, nullptr)));
  int file = open(sandboxed, O_RDONLY | O_CLOEXEC);
  char c = 0;
  Print("sandboxed_read", file < 0 ? -errno : Ret(read(file, &c, 1)));
  Print("sandboxed_x", c == 'x');
  Print("getppid", Ret(syscall(SYS_getppid)));
  Print("getppid_again", Ret(syscall(SYS_getppid)));
  Print("listener", Ret(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)));
  long untraced = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
  if (untraced == 0) _exit(0);
  if (untraced > 0) waitpid(static_cast<pid_t>(untraced), nullptr, 0);
  Print("clone_untraced", Ret(untraced));
  clone_args args{};
  args.exit_signal = SIGCHLD;
  long clone3 = syscall(SYS_clone3, &args, sizeof args);
  if (clone3 == 0) _exit(0);
  if (clone3 > 0) waitpid(static_cast<pid_t>(clone3), nullptr, 0);
  Print("clone3", Ret(clone3));
  pid_t child = fork();
  if (child == 0) _exit(7);
  Print("fork_child", child > 0 ? WaitChild(child) : -errno);
  pthread_t thread;
  static std::atomic<int> ran{0};
  const int created = pthread_create(&thread, nullptr, [](void*) -> void* { ran = 1; return nullptr; }, nullptr);
  if (created == 0) pthread_join(thread, nullptr);
  Print("thread", created == 0 ? ran.load() : -created);
  return 0;
}

// A shared mapping of PATH, then remap_file_pages onto another offset of the same file.
int RemapFilePages(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  void* at = mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0);
  Print("mmap", at == MAP_FAILED ? -errno : 0);
  if (at != MAP_FAILED) Print("remap", Ret(syscall(SYS_remap_file_pages, at, 4096, 0, 1, 0)));
  return 0;
}

// What a program can do to the scratch region, and to /proc/<pid>/mem, which writes read-only
// memory: every way in is refused under the harness. DIR gets a symlink to /proc/self/mem.
// DEVICE (optional): a proxied file, mapped MAP_FIXED over the region.
// process_vm_writev into a fork child (which has the same scratch region, at the same address)
// and into this process: ordinary memory is written; the region's writable half is not (EFAULT),
// and a write whose second range reaches it ends before it (the first range's bytes).
uint64_t g_vm_target = 0;
int ProcessVmWrite() {
  int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);  // a path lookup: the region is mapped
  if (probe >= 0) close(probe);
  const uint64_t region = FindScratchRegion();
  Print("found", region != 0);
  if (region == 0) return 0;
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    char byte;
    close(go[1]);
    const bool ok = read(go[0], &byte, 1) == 0 && g_vm_target == 0x5a5a5a5a5a5a5a5a;
    _exit(ok ? 0 : 1);
  }
  close(go[0]);
  uint64_t value = 0x5a5a5a5a5a5a5a5a;
  iovec local{&value, sizeof(value)};
  iovec plain{&g_vm_target, sizeof(value)};
  iovec writable{reinterpret_cast<void*>(region + kScratchHalf), sizeof(value)};
  iovec both[2] = {plain, writable};
  iovec local_twice[2] = {local, local};
  Print("plain", Ret(process_vm_writev(child, &local, 1, &plain, 1, 0)));
  Print("writable-half", Ret(process_vm_writev(child, &local, 1, &writable, 1, 0)));
  Print("partial", Ret(process_vm_writev(child, local_twice, 2, both, 2, 0)));
  Print("self", Ret(process_vm_writev(getpid(), &local, 1, &writable, 1, 0)));
  close(go[1]);
  Print("child-saw-write", WaitChild(child) == 0);
  return 0;
}

int ScratchGuard(const char* dir, const char* device) {
  // A path lookup first, so the harness has mapped the region.
  int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (probe >= 0) close(probe);
  const uintptr_t region = FindScratchRegion();
  Print("found", region != 0);
  Print("region", static_cast<long>(region));
  if (region != 0 && region < 0x400000) {
    // The harness's low window (no mseal): memory just below it is the program's to use.
    void* below = reinterpret_cast<void*>(region - 65536);
    void* got = mmap(below, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    Print("below-map", got == MAP_FAILED ? -errno : got == below ? 0 : -EFAULT);
    Print("below-mprotect", Ret(mprotect(below, 4096, PROT_READ)));
    Print("below-unmap", Ret(munmap(below, 4096)));
    Print("span-unmap", Ret(munmap(below, 65536 + 4096)));
  }
  if (region != 0) {
    void* at = reinterpret_cast<void*>(region);
    Print("mprotect", Ret(mprotect(at, 4096, PROT_READ | PROT_WRITE)));
    Print("munmap", Ret(munmap(at, 4096)));
    Print("dontneed", Ret(madvise(at, 4096, MADV_DONTNEED)));
    void* over = mmap(at, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    Print("map-over", over == MAP_FAILED ? -errno : 0);
    if (*device != '\0') {
      int fd = open(device, O_RDWR | O_CLOEXEC);
      void* dev = fd < 0 ? MAP_FAILED
                         : mmap(at, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
      Print("device-over", fd < 0 ? -ENODEV : dev == MAP_FAILED ? -errno : 0);
      if (fd >= 0) close(fd);
    }
    pid_t child = fork();
    if (child == 0) _exit(mprotect(at, 4096, PROT_READ | PROT_WRITE) == 0 ? 0 : errno);
    Print("child-mprotect", -WaitChild(child));
  }
  auto open_close = [](long fd) {
    if (fd >= 0) { close(static_cast<int>(fd)); return 0L; }
    return fd;
  };
  Print("mem-read", open_close(Ret(open("/proc/self/mem", O_RDONLY | O_CLOEXEC))));
  Print("mem-rdwr", open_close(Ret(open("/proc/self/mem", O_RDWR | O_CLOEXEC))));
  std::string task = "/proc/self/task/" + std::to_string(gettid()) + "/mem";
  Print("task-mem", open_close(Ret(open(task.c_str(), O_WRONLY | O_CLOEXEC))));
  std::string link = std::string(dir) + "/mem-link";
  unlink(link.c_str());
  Print("symlink", Ret(symlink("/proc/self/mem", link.c_str())));
  Print("via-link", open_close(Ret(open(link.c_str(), O_WRONLY | O_CLOEXEC))));
  int self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  Print("via-dirfd", open_close(Ret(openat(self, "mem", O_RDWR | O_CLOEXEC))));
  close(self);
  struct {
    uint64_t flags, mode, resolve;
  } how{O_RDWR | O_CLOEXEC, 0, 0};
  Print("openat2", open_close(Ret(syscall(SYS_openat2, AT_FDCWD, "/proc/self/mem", &how, sizeof(how)))));
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    std::string mem = "/proc/" + std::to_string(parent) + "/mem";
    int fd = open(mem.c_str(), O_WRONLY | O_CLOEXEC);
    _exit(fd >= 0 ? 0 : errno);
  }
  Print("parent-mem", -WaitChild(child));
  return 0;
}

int ProcReopen(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ReadLink(link);
  Print("reopen", Ret(open(link, O_RDWR | O_CLOEXEC)));
  return 0;
}

int CloseRange(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  Print("close_range", Ret(syscall(SYS_close_range, 3, ~0U, 0)));
  Print("fd_open_after", Ret(fcntl(fd, F_GETFD)));
  Print("reopen", Ret(open(path, O_RDWR | O_CLOEXEC)));
  return 0;
}

// Credential calls before and after opening a device: a no-op setresuid (before and after),
// setfsuid(-1) (a query), then two that change something where permitted -- dropping a
// capability from the bounding set (CAP_SETPCAP) and a new user namespace.
int Credentials(const char* path) {
  Print("noop_before_open", Ret(syscall(SYS_setresuid, -1, -1, -1)));
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  Print("noop_setresuid", Ret(syscall(SYS_setresuid, -1, -1, -1)));
  Print("setfsuid_query", syscall(SYS_setfsuid, -1) >= 0 ? 0 : 1);  // returns the fsuid
  // Queries that share a credential call: no new credentials.
  Print("ambient_is_set", Ret(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0)));
  Print("reqkey_query", Ret(syscall(SYS_keyctl, KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE)));
  // No-ops that still commit new credentials (__sys_setuid, cap_task_prctl).
  Print("noop_setuid", Ret(syscall(SYS_setuid, getuid())));
  Print("noop_keepcaps", Ret(prctl(PR_SET_KEEPCAPS, prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0, 0, 0)));
  Print("capbset_drop", Ret(prctl(PR_CAPBSET_DROP, CAP_AUDIT_READ, 0, 0, 0)));
  Print("userns", Ret(unshare(CLONE_NEWUSER)));
  return 0;
}

// A proxied fd opened for writes whose length names the step (the recording factory keeps each
// entry's SyscallView::credentials, so a test tells which credentials each step had).
struct StepWriter {
  explicit StepWriter(const char* path) : fd(open(path, O_RDWR | O_CLOEXEC)) { Print("fd", Ret(fd)); }
  void operator()(size_t n) const {
    char buf[8] = {};
    (void)!write(fd, buf, n);
  }
  int fd;
};

// Steps from threads and processes whose credentials differ as the kernel's struct cred
// pointers would.
int ThreadCredentials(const char* path) {
  const StepWriter step(path);
  step(1);  // the opener
  std::thread changed([&] {
    step(2);  // a thread created after the open: the opener's credentials
    syscall(SYS_setuid, getuid());  // a raw call: new credentials for this thread only
    step(3);
    // Its own thread shares them; it writes once its creator is past the clone event.
    std::atomic<bool> created{false};
    std::thread inner([&] {
      while (!created) std::this_thread::yield();
      step(4);
    });
    created = true;
    inner.join();
  });
  changed.join();
  step(5);  // the opener's thread, unchanged
  const pid_t pid = fork();
  if (pid == 0) {
    step(6);  // a child: its own
    _exit(0);
  }
  Print("child", WaitChild(pid));
  return 0;
}

// A thread that commits new credentials and writes again: run where its first stops come
// before its creator's clone event (HarnessOptions::hold_creator_events), which must not give
// it its creator's credentials back.
int ThreadCredentialsEarly(const char* path) {
  const StepWriter step(path);
  step(1);  // the opener
  std::thread changed([&] {
    step(2);                        // the opener's credentials (copy_creds)
    syscall(SYS_setuid, getuid());  // new credentials for this thread only
    step(3);                        // its own, also once its creator's event has been seen
  });
  changed.join();
  step(4);  // the opener's thread, unchanged
  return 0;
}

int ForkDevice(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(fd));
  pid_t pid = fork();
  if (pid == 0) {
    char buf[1];
    _exit(read(fd, buf, 0) == 0 ? 0 : 1);
  }
  Print("child", WaitChild(pid));
  char buf[1];
  Print("read", Ret(read(fd, buf, 0)));
  return 0;
}

// Opens a device without O_CLOEXEC (and one with), then execs: the survivor stays proxied.
int ExecKeep(const char* path) {
  int keep = open(path, O_RDWR);
  int drop = open(path, O_RDWR | O_CLOEXEC);
  std::string arg = std::to_string(keep);
  Print("keep", keep);
  Print("drop", drop);
  execl(g_self, g_self, "read-fd", arg.c_str(), nullptr);
  return 127;
}

int ReadFd(int fd) {
  char buf[1];
  Print("read", Ret(read(fd, buf, 0)));
  return 0;
}

int IoctlVerbs(int fd) {
  Print("ioctl", Ret(ioctl(fd, kRdmaVerbsIoctl, nullptr)));
  return 0;
}

int IoUring() {
  Print("io_uring_setup", Ret(syscall(SYS_io_uring_setup, 4, nullptr)));
  return 0;
}

// Reads an ordinary file through an fd in the reserved range's stopping half, N times; with a
// PATH, opens that (proxied) device first.
int RangeFdLoop(long n, const char* device) {
  if (device[0] != '\0' && open(device, O_RDWR | O_CLOEXEC) < 0) return 1;
  int fd = dup2(open("/dev/zero", O_RDONLY | O_CLOEXEC), 1000);
  char buf[8];
  for (long i = 0; i < n; ++i)
    if (read(fd, buf, sizeof buf) != sizeof buf) return 1;
  Print("loops", n);
  return 0;
}

// N threads open the device and read it at once: the first open adds the device filter to
// every thread (TSYNC).
int ThreadsDevice(const char* path, int n) {
  static const char* device = path;
  std::atomic<int> ok{0};
  std::vector<pthread_t> threads(static_cast<size_t>(n));
  for (auto& t : threads) {
    pthread_create(&t, nullptr, [](void* arg) -> void* {
      int fd = open(device, O_RDWR | O_CLOEXEC);
      char buf[1];
      if (fd >= 0 && read(fd, buf, 0) == 0) static_cast<std::atomic<int>*>(arg)->fetch_add(1);
      return nullptr;
    }, &ok);
  }
  for (auto& t : threads) pthread_join(t, nullptr);
  Print("threads_ok", ok.load());
  return 0;
}

// A CLONE_FILES sibling process created before the device is opened: it shares the fd, and
// (after its next traced syscall) its reads of it are proxied too.
int CloneFilesLate(const char* path) {
  static char stack[64 * 1024];
  static int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return 1;
  pid_t pid = clone([](void*) -> int {
    int devfd = -1;  // the parent sends the number: the fd table is shared, memory is not
    if (read(pipefd[0], &devfd, sizeof devfd) != sizeof devfd) return 1;
    struct stat st{};
    stat("/", &st);  // any traced syscall: the sibling gets the device filter here
    char buf[1];
    return read(devfd, buf, 0) == 0 ? 0 : 2;
  }, stack + sizeof stack, CLONE_FILES | SIGCHLD, nullptr);
  int devfd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(devfd));
  (void)!write(pipefd[1], &devfd, sizeof devfd);
  Print("child", WaitChild(pid));
  return 0;
}

// N opens and copies (dup, F_DUPFD) of a proxied device while HELPERS threads, or CLONE_FILES
// sibling processes, fstat every low fd number over and over: a device seen there is one the
// kernel had installed and the tracer had not moved into the range yet, usable without a stop.
struct OpenWindowShared {
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<long> seen{0};
  std::atomic<long> scans{0};
  dev_t rdev = 0;
  ino_t ino = 0;
  bool known[64] = {};  // low numbers that named the device before the helpers started
};

int ScanLowFds(void* arg) {
  auto* shared = static_cast<OpenWindowShared*>(arg);
  shared->running.fetch_add(1);
  while (!shared->stop.load()) {
    for (int fd = 3; fd < 64; ++fd) {
      struct stat st{};
      if (!shared->known[fd] && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
          st.st_rdev == shared->rdev && st.st_ino == shared->ino)
        shared->seen.fetch_add(1);
    }
    shared->scans.fetch_add(1);
  }
  return 0;
}

int OpenWindow(const char* path, long n, int helpers, bool processes) {
  void* mem = mmap(nullptr, sizeof(OpenWindowShared), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  auto* shared = new (mem) OpenWindowShared;
  const int device = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(device));
  struct stat ref{};
  if (device < 0 || fstat(device, &ref) != 0) return 1;
  shared->rdev = ref.st_rdev;
  shared->ino = ref.st_ino;
  for (int fd = 3; fd < 64; ++fd) {
    struct stat st{};
    shared->known[fd] = fstat(fd, &st) == 0 && st.st_rdev == ref.st_rdev && st.st_ino == ref.st_ino;
  }
  std::vector<pthread_t> threads;
  std::vector<pid_t> children;
  static char stacks[8][64 * 1024];
  for (int i = 0; i < helpers && i < 8; ++i) {
    if (processes) {
      children.push_back(clone(ScanLowFds, stacks[i] + sizeof stacks[i], CLONE_FILES | SIGCHLD, shared));
    } else {
      pthread_t t;
      pthread_create(&t, nullptr, [](void* arg) -> void* {
        ScanLowFds(arg);
        return nullptr;
      }, shared);
      threads.push_back(t);
    }
  }
  while (shared->running.load() < static_cast<int>(threads.size() + children.size())) sched_yield();
  long opened = 0, copied = 0, low = 0, eagain = 0;
  auto count = [&](int fd, long& ok) {
    if (fd >= 0) {
      ++ok;
      if (fd < 768) ++low;
      close(fd);
    } else if (errno == EAGAIN) {
      ++eagain;
    }
  };
  for (long i = 0; i < n; ++i) {
    usleep(100);  // let the helpers scan between calls
    count(open(path, O_RDWR | O_CLOEXEC), opened);
    count(dup(device), copied);
    count(fcntl(device, F_DUPFD_CLOEXEC, 3), copied);
  }
  shared->stop = true;
  for (pthread_t t : threads) pthread_join(t, nullptr);
  for (pid_t pid : children) WaitChild(pid);
  Print("opened", opened);
  Print("copied", copied);
  Print("low", low);
  Print("eagain", eagain);
  Print("seen", shared->seen.load());
  Print("scans", shared->scans.load());
  return 0;
}

// Writes TEXT N times to a proxied file; prints the total written or the first error.
int WriteProxied(const char* path, const char* text, long n) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  long total = 0;
  for (long i = 0; i < n; ++i) {
    ssize_t w = write(fd, text, std::strlen(text));
    if (w < 0) {
      Print("wrote", -errno);
      return 0;
    }
    total += w;
  }
  Print("wrote", total);
  return 0;
}

int ReadProxied(const char* path, long n) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  char buf[1];
  for (long i = 0; i < n; ++i)
    if (read(fd, buf, 0) < 0) return 1;
  Print("reads", n);
  return 0;
}

// aio-write PATH: an asynchronous write (io_submit) to the file at PATH, and one to
// /dev/null: the results of both submissions.
int AioWrite(const char* path) {
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  aio_context_t ctx = 0;
  if (syscall(SYS_io_setup, 4, &ctx) != 0) {
    Print("io_setup", -errno);
    return 0;
  }
  static char data[8] = "payload";
  auto submit = [&](int which) {
    iocb cb{};
    cb.aio_lio_opcode = IOCB_CMD_PWRITE;
    cb.aio_fildes = static_cast<uint32_t>(which);
    cb.aio_buf = reinterpret_cast<uint64_t>(data);
    cb.aio_nbytes = sizeof(data);
    iocb* cbs[1] = {&cb};
    return Ret(syscall(SYS_io_submit, ctx, 1, cbs));
  };
  Print("aio_null", submit(null_fd));
  Print("aio_proxied", submit(fd));
  syscall(SYS_io_destroy, ctx);
  return 0;
}

// --- Address-space freezes (tracer_freeze.cc) -------------------------------------------

// The harness's kernel-writable scratch slots: the second half of the region.
uint64_t FindKernelScratch() {
  const uint64_t region = FindScratchRegion();
  return region == 0 ? 0 : region + kScratchHalf;
}

std::atomic<uint64_t> g_counter{0};  // incremented by spinning threads; ioctls point at it
std::atomic<bool> g_stop{false};
uint64_t g_kernel_scratch = 0;

// With it set, the hammer writes 0 and 1 in turn into the first word of every slot instead.
std::atomic<bool> g_hammer_first_word{false};

// Writes into the first 512 bytes of every kernel-writable slot, 8 bytes at a time.
void HammerScratch(uint64_t round) {
  if (g_kernel_scratch == 0) return;
  if (g_hammer_first_word.load(std::memory_order_relaxed)) {
    for (uint64_t slot = 0; slot < kScratchSlotCount; ++slot) {
      auto* word = reinterpret_cast<volatile uint64_t*>(g_kernel_scratch + slot * kScratchSlotBytes);
      *word = round & 1;
    }
    return;
  }
  const uint64_t offset = (round % 64) * 8;
  for (uint64_t slot = 0; slot < kScratchSlotCount; ++slot) {
    auto* word = reinterpret_cast<volatile uint64_t*>(g_kernel_scratch +
                                                       slot * kScratchSlotBytes + offset);
    *word = round;
  }
}

void* SpinAndHammer(void*) {
  for (uint64_t round = 0; !g_stop.load(std::memory_order_relaxed); ++round) {
    g_counter.fetch_add(1, std::memory_order_relaxed);
    HammerScratch(round);
  }
  return nullptr;
}

long VerbsIoctl(int fd) {
  return ioctl(fd, kRdmaVerbsIoctl, &g_counter) < 0 ? -errno : 0;
}

// N verbs ioctls on a proxied device while HELPERS threads spin, incrementing g_counter and
// writing into every kernel-writable scratch slot. Each ioctl points at g_counter.
// HELPERS threads running SpinAndHammer against the kernel-writable scratch slots of `path`'s
// proxied file (opened here), until Stop(). `fd` < 0: the open failed (already printed).
struct Hammering {
  int fd = -1;
  std::vector<pthread_t> threads;
  Hammering(const char* path, int helpers, bool first_word) {
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      Print("fd", -errno);
      return;
    }
    g_kernel_scratch = FindKernelScratch();
    Print("scratch_found", g_kernel_scratch != 0 ? 1 : 0);
    g_hammer_first_word = first_word;
    threads.resize(static_cast<size_t>(helpers));
    for (auto& t : threads) pthread_create(&t, nullptr, SpinAndHammer, nullptr);
    while (helpers > 0 && g_counter.load() < 1000) sched_yield();  // they are running
  }
  void Stop() {
    g_stop = true;
    for (auto& t : threads) pthread_join(t, nullptr);
  }
};

int FreezeSpin(const char* path, long n, int helpers) {
  Hammering hammer(path, helpers, /*first_word=*/false);
  const int fd = hammer.fd;
  if (fd < 0) return 1;
  long enotty = 0, eagain = 0, other = 0;
  for (long i = 0; i < n; ++i) {
    if (helpers > 0) usleep(50);  // let the helpers run between calls
    const long r = VerbsIoctl(fd);
    if (r == -ENOTTY) ++enotty;  // what /dev/null, the stand-in device, answers
    else if (r == -EAGAIN) ++eagain;
    else ++other;
  }
  hammer.Stop();
  Print("enotty", enotty);
  Print("eagain", eagain);
  Print("other", other);
  return 0;
}

// N ioctl(FIONBIO) calls, alternately clearing and setting O_NONBLOCK, while HELPERS threads
// write 0 and 1 in turn into every kernel-writable slot. The kernel reads the int the call
// points at (do_vfs_ioctl); F_GETFL then shows which value it saw.
int FreezeFionbio(const char* path, long n, int helpers) {
  Hammering hammer(path, helpers, /*first_word=*/true);
  const int fd = hammer.fd;
  if (fd < 0) return 1;
  long wrong = 0, failed = 0;
  for (long i = 0; i < n; ++i) {
    if (helpers > 0) usleep(50);
    int want = static_cast<int>(i & 1);
    if (ioctl(fd, FIONBIO, &want) != 0) ++failed;
    const int flags = fcntl(fd, F_GETFL);
    if (((flags & O_NONBLOCK) != 0) != (want != 0)) ++wrong;
  }
  hammer.Stop();
  Print("failed", failed);
  Print("wrong", wrong);
  return 0;
}

std::atomic<long> g_bad{0};  // stress: anything that went wrong, with a line on stderr
std::atomic<long> g_signals{0};
int g_stress_fd = -1;

// The main thread (the thread-group leader) does ioctls without end, a helper spins, and
// another thread execs `exit 0` after a while: de_thread kills the leader, possibly inside a
// frozen syscall, and the exec'ing thread takes over its tid (ptrace(2), "execve(2) under
// ptrace").
int FreezeExec(const char* path) {
  g_stress_fd = open(path, O_RDWR | O_CLOEXEC);
  if (g_stress_fd < 0) return 1;
  g_kernel_scratch = FindKernelScratch();
  pthread_t spinner, execer;
  pthread_create(&spinner, nullptr, SpinAndHammer, nullptr);
  pthread_create(&execer, nullptr, [](void*) -> void* {
    usleep(30'000);
    execl(g_self, g_self, "exit", "0", nullptr);
    _exit(127);
  }, nullptr);
  for (;;) (void)VerbsIoctl(g_stress_fd);
}


void Bad(const char* what, long value) {
  g_bad.fetch_add(1);
  std::fprintf(stderr, "testee: %s: %ld\n", what, value);
}

void StressIoctl() {
  const long r = VerbsIoctl(g_stress_fd);
  if (r != -ENOTTY) Bad("ioctl", r);
}

// A child (fork, or a thread that exits) does a few ioctls; with `threads`, from two threads.
void* TwoIoctls(void*) {
  StressIoctl();
  StressIoctl();
  return nullptr;
}

// Forks children that do ioctls (single- and multi-threaded) and vforks children that exec,
// until told to stop.
void* Forker(void*) {
  static std::atomic<long> forks{0};  // not a local: vfork() returns twice into this frame
  while (!g_stop.load()) {
    pid_t pid = fork();
    if (pid == 0) {
      long bad = 0;
      for (int i = 0; i < 3; ++i) bad += VerbsIoctl(g_stress_fd) != -ENOTTY;
      pthread_t t;
      pthread_create(&t, nullptr, [](void*) -> void* {
        for (int i = 0; i < 5; ++i) (void)VerbsIoctl(g_stress_fd);
        return nullptr;
      }, nullptr);
      for (int i = 0; i < 5; ++i) bad += VerbsIoctl(g_stress_fd) != -ENOTTY;
      pthread_join(t, nullptr);
      _exit(bad == 0 ? 0 : 1);
    }
    if (const int code = WaitChild(pid); code != 0) Bad("fork child", code);
    pid = vfork();
    if (pid == 0) {
      execl(g_self, g_self, "exit", "0", nullptr);
      _exit(127);
    }
    if (const int code = WaitChild(pid); code != 0) Bad("vfork child", code);
    ++forks;
  }
  Print("forks", forks.load());
  return nullptr;
}

// Creates short-lived threads that do ioctls, so threads start and exit during freezes.
void* Churn(void*) {
  long churned = 0;
  while (!g_stop.load()) {
    pthread_t t[3];
    for (auto& one : t) pthread_create(&one, nullptr, TwoIoctls, nullptr);
    for (auto& one : t) pthread_join(one, nullptr);
    churned += 3;
  }
  Print("churned", churned);
  return nullptr;
}

// Sleeps 1 ms at a time: freezes interrupt the sleep, which must be restarted for what is
// left (ERESTART_RESTARTBLOCK), never cut short or failed.
void* Sleeper(void*) {
  long sleeps = 0;
  while (!g_stop.load()) {
    timespec start{}, end{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    timespec ms{0, 1'000'000};
    if (nanosleep(&ms, nullptr) != 0) Bad("nanosleep", -errno);
    clock_gettime(CLOCK_MONOTONIC, &end);
    const long ns = (end.tv_sec - start.tv_sec) * 1'000'000'000L + (end.tv_nsec - start.tv_nsec);
    if (ns < 1'000'000) Bad("nanosleep returned early (ns)", ns);
    ++sleeps;
  }
  Print("sleeps", sleeps);
  return nullptr;
}

// A reader blocked in read(2) on a pipe (ERESTARTSYS when interrupted) must get every message,
// in order.
int g_pipe[2];
void* PipeReader(void*) {
  long expect = 0;
  for (;;) {
    long value = 0;
    const ssize_t n = read(g_pipe[0], &value, sizeof value);
    if (n == 0) break;
    if (n != sizeof value) {
      Bad("pipe read", n < 0 ? -errno : n);
      break;
    }
    if (value != expect) Bad("pipe message out of order", value);
    expect = value + 1;
  }
  Print("pipe_messages", expect);
  return nullptr;
}
void* PipeWriter(void*) {
  for (long i = 0; !g_stop.load(); ++i) {
    if (write(g_pipe[1], &i, sizeof i) != sizeof i) Bad("pipe write", -errno);
    usleep(200);
  }
  close(g_pipe[1]);
  return nullptr;
}

// Sends SIGUSR1 (handled, SA_RESTART) to the long-lived threads, which are frozen and
// interrupted meanwhile: signal-delivery stops get held and must still be delivered.
pthread_t g_signal_targets[4];
void* Signaller(void*) {
  for (unsigned i = 0; !g_stop.load(); ++i) {
    pthread_kill(g_signal_targets[i % 4], SIGUSR1);
    usleep(100);
  }
  return nullptr;
}

// A two-threaded child doing ioctls is stopped (SIGSTOP) and continued over and over.
void* Stopper(void*) {
  pid_t pid = fork();
  if (pid == 0) {
    pthread_t t;
    pthread_create(&t, nullptr, [](void*) -> void* {
      for (int i = 0; i < 300; ++i) (void)VerbsIoctl(g_stress_fd);
      return nullptr;
    }, nullptr);
    long bad = 0;
    for (int i = 0; i < 300; ++i) bad += VerbsIoctl(g_stress_fd) != -ENOTTY;
    pthread_join(t, nullptr);
    _exit(bad == 0 ? 0 : 1);
  }
  long cycles = 0;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGSTOP);
    usleep(300);
    kill(pid, SIGCONT);
    usleep(300);
    ++cycles;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0) Bad("stopped child", code);
  Print("stop_cycles", cycles);
  return nullptr;
}

// Everything at once: WORKERS threads do ROUNDS ioctls each while threads come and go,
// children are forked and vforked, signals fly, threads sleep and block in read(2), and a
// child is group-stopped and continued. Writes its pid (and process group) to PIDFILE first.
int FreezeStress(const char* path, long rounds, const char* pidfile) {
  setpgid(0, 0);  // the test's watchdog kills the whole group if this hangs
  if (FILE* f = std::fopen(pidfile, "we")) {
    std::fprintf(f, "%d\n", getpid());
    std::fclose(f);
  }
  g_stress_fd = open(path, O_RDWR);
  if (g_stress_fd < 0) {
    Print("fd", -errno);
    return 1;
  }
  g_kernel_scratch = FindKernelScratch();
  Print("scratch_found", g_kernel_scratch != 0 ? 1 : 0);
  struct sigaction sa{};
  sa.sa_handler = [](int) { g_signals.fetch_add(1); };
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return 1;

  static long s_rounds = rounds;
  std::vector<pthread_t> others(7);
  pthread_create(&others[0], nullptr, SpinAndHammer, nullptr);
  pthread_create(&others[1], nullptr, Forker, nullptr);
  pthread_create(&others[2], nullptr, Churn, nullptr);
  pthread_create(&others[3], nullptr, Sleeper, nullptr);
  pthread_create(&others[4], nullptr, PipeReader, nullptr);
  pthread_create(&others[5], nullptr, PipeWriter, nullptr);
  pthread_create(&others[6], nullptr, Stopper, nullptr);
  std::vector<pthread_t> workers(8);
  for (size_t i = 0; i < workers.size(); ++i) {
    pthread_create(&workers[i], nullptr, [](void*) -> void* {
      for (long r = 0; r < s_rounds; ++r) StressIoctl();
      return nullptr;
    }, nullptr);
  }
  g_signal_targets[0] = pthread_self();  // blocked in pthread_join (futex, restarted)
  g_signal_targets[1] = others[0];       // spinning
  g_signal_targets[2] = others[1];       // forking, vforking, waiting for children
  g_signal_targets[3] = others[2];       // creating and joining threads
  pthread_t signaller;
  pthread_create(&signaller, nullptr, Signaller, nullptr);
  for (auto& t : workers) pthread_join(t, nullptr);
  g_stop = true;
  pthread_join(signaller, nullptr);
  for (auto& t : others) pthread_join(t, nullptr);
  Print("ioctls", static_cast<long>(workers.size()) * rounds);
  Print("signals", g_signals.load());
  Print("bad", g_bad.load());
  return 0;
}

// A vfork child shares the address space until it execs, and its parent sleeps in the kernel
// meanwhile: neither may hold up a freeze. A thread vforks a child that blocks in read(2);
// the main thread does N ioctls (the child is stopped, its parent left asleep), then lets the
// child do an ioctl of its own (the caller, with its parent asleep) and exec.
int FreezeVfork(const char* path, long n) {
  g_stress_fd = open(path, O_RDWR | O_CLOEXEC);
  if (g_stress_fd < 0 || pipe2(g_pipe, O_CLOEXEC) != 0) return 1;
  pthread_t spinner, parent;
  pthread_create(&spinner, nullptr, SpinAndHammer, nullptr);
  static std::atomic<int> child_code{-1};
  pthread_create(&parent, nullptr, [](void*) -> void* {
    const pid_t pid = vfork();
    if (pid == 0) {
      // Raw syscalls only: the child borrows the parent's memory and stack.
      char byte = 0;
      syscall(SYS_read, g_pipe[0], &byte, 1);
      const long r = syscall(SYS_ioctl, g_stress_fd, kRdmaVerbsIoctl, &g_counter);
      execl(g_self, g_self, "exit", r == -1 && errno == ENOTTY ? "0" : "1", nullptr);
      _exit(127);
    }
    child_code = WaitChild(pid);
    return nullptr;
  }, nullptr);
  usleep(50'000);  // the parent is in vfork() now, the child in read()
  long enotty = 0;
  for (long i = 0; i < n; ++i) enotty += VerbsIoctl(g_stress_fd) == -ENOTTY;
  (void)!write(g_pipe[1], "x", 1);
  pthread_join(parent, nullptr);
  g_stop = true;
  pthread_join(spinner, nullptr);
  Print("enotty", enotty);
  Print("vfork_child", child_code.load());
  return 0;
}

// Whether /proc/<pid>/stat (or a task's) says the task is a zombie: its state follows the
// command's closing parenthesis.
bool IsZombie(const char* stat_path) {
  char buf[512] = {};
  const int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  const char* paren = n > 0 ? std::strrchr(buf, ')') : nullptr;
  return paren != nullptr && paren[1] == ' ' && paren[2] == 'Z';
}

// The main thread exits (pthread_exit) and stays a zombie while a worker does N ioctls: it
// never reports a stop again, and a freeze must not wait for it.
int FreezeLeaderExit(const char* path, long n) {
  g_stress_fd = open(path, O_RDWR | O_CLOEXEC);
  if (g_stress_fd < 0) return 1;
  static long s_n = n;
  pthread_t worker;
  pthread_create(&worker, nullptr, [](void*) -> void* {
    // Until the main thread is a zombie (up to 30 s on a loaded machine): then it is past its
    // PTRACE_EVENT_EXIT stop, which the tracer has resumed.
    const std::string stat = "/proc/self/task/" + std::to_string(getpid()) + "/stat";
    for (int i = 0; i < 30'000 && !IsZombie(stat.c_str()); ++i) usleep(1000);
    long enotty = 0;
    for (long i = 0; i < s_n; ++i) enotty += VerbsIoctl(g_stress_fd) == -ENOTTY;
    Print("enotty", enotty);
    return nullptr;
  }, nullptr);
  pthread_exit(nullptr);
}

// Creates N vfork children that exec `exit 0` and N fork children that exit at once, while
// HELPERS threads' ioctls keep freezing the address space. The creator's fork/vfork event is then often
// held in a freeze while its child (another mm once it has exec'd, or a fork child's copy) is
// adopted from its own first stop, runs and dies: the event, handled last, names a task that is
// gone and must not be tracked again.
int FreezeChildRace(const char* path, long n, int helpers) {
  g_stress_fd = open(path, O_RDWR | O_CLOEXEC);
  if (g_stress_fd < 0) return 1;
  std::vector<pthread_t> hammers(static_cast<size_t>(std::max(helpers, 1)));
  for (auto& hammer : hammers)
    pthread_create(&hammer, nullptr, [](void*) -> void* {
      while (!g_stop.load()) (void)VerbsIoctl(g_stress_fd);
      return nullptr;
    }, nullptr);
  static long bad = 0;  // not a local: vfork() returns twice into this frame
  for (long i = 0; i < n; ++i) {
    pid_t pid = vfork();
    if (pid == 0) {
      execl(g_self, g_self, "exit", "0", nullptr);
      _exit(127);
    }
    bad += WaitChild(pid) != 0;
    pid = fork();
    if (pid == 0) _exit(0);
    bad += WaitChild(pid) != 0;
  }
  g_stop = true;
  for (auto& hammer : hammers) pthread_join(hammer, nullptr);
  Print("children_bad", bad);
  return 0;
}

// Two freezes covering one task: the main thread opens the device N times (a freeze of its mm
// and fd table) while a CLONE_FILES sibling process vforks, over and over, a child that runs
// verbs ioctls (a kernel-read copy's freeze of the sibling's mm). The sibling's main thread is
// in both: the vfork parent, asleep until its child is done.
int FreezeOverlap(const char* path, long n) {
  void* mem = mmap(nullptr, sizeof(OpenWindowShared), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  auto* shared = new (mem) OpenWindowShared;
  g_stress_fd = open(path, O_RDWR | O_CLOEXEC);
  Print("fd", Ret(g_stress_fd));
  if (g_stress_fd < 0) return 1;
  static char stack[64 * 1024];
  const pid_t sibling = clone([](void* arg) -> int {
    auto* state = static_cast<OpenWindowShared*>(arg);
    state->running = 1;
    while (!state->stop.load()) {
      const pid_t pid = vfork();
      if (pid == 0) {
        // Raw syscalls only: the child borrows the sibling's memory and stack.
        long failed = 0;
        for (int i = 0; i < 20; ++i)
          failed += syscall(SYS_ioctl, g_stress_fd, kRdmaVerbsIoctl, &g_counter) != -1 || errno != ENOTTY;
        _exit(failed == 0 ? 0 : 1);
      }
      if (pid < 0 || WaitChild(pid) != 0) state->seen.fetch_add(1);  // a child's ioctl failed
      state->scans.fetch_add(1);
    }
    return 0;
  }, stack + sizeof stack, CLONE_FILES | SIGCHLD, shared);
  while (shared->running.load() == 0) sched_yield();
  long opened = 0, other = 0;
  for (long i = 0; i < n; ++i) {
    usleep(200);
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 768) ++opened;
    else ++other;
    if (fd >= 0) close(fd);
  }
  shared->stop = true;
  Print("sibling", WaitChild(sibling));
  Print("opened", opened);
  Print("other", other);
  Print("vfork_rounds", shared->scans.load());
  Print("vfork_failed", shared->seen.load());
  return 0;
}

// strict VIA [filter]: enters SECCOMP_MODE_STRICT through VIA (prctl, seccomp, or seccomp-bad:
// with a flag, which is EINVAL), after a filter of its own when asked (then EINVAL too: the
// kernel refuses strict mode to a thread with filters); reports with write(2), which strict
// mode allows, then calls getppid, which it does not: killed with SIGKILL. "survived" is
// printed only if the getppid returned.
int Strict(const char* via, const char* filter) {
  if (std::strcmp(filter, "filter") == 0) {
    sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog prog{1, allow};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return 3;
  }
  std::fflush(stdout);
  const std::string how = via;
  const long r = how == "prctl"         ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)
                 : how == "seccomp-bad" ? syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, nullptr)
                                        : syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, nullptr);
  char line[64];
  const int n = std::snprintf(line, sizeof line, "strict=%ld\n", r < 0 ? -errno : r);
  syscall(SYS_write, 1, line, n);
  if (r != 0) return 0;
  syscall(SYS_getppid);
  syscall(SYS_write, 1, "survived=1\n", 11);
  syscall(SYS_exit, 0);
  return 0;
}

// strict-thread: a second thread enters strict mode and makes a call it forbids, which ends
// that thread alone; the process goes on (joins it, prints, exits 0).
int StrictThread() {
  pthread_t thread;
  static std::atomic<long> entered{1};
  pthread_create(&thread, nullptr, [](void*) -> void* {
    entered = syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, nullptr);
    syscall(SYS_getppid);
    entered = 42;  // not reached
    syscall(SYS_exit, 0);
    return nullptr;
  }, nullptr);
  pthread_join(thread, nullptr);
  Print("thread_strict", entered.load());
  Print("after", Ret(syscall(SYS_getppid)) > 0);
  return 0;
}

// filter-exec ACTION VIA CMD ARGS...: installs a filter of its own that answers mseal(2)
// with ACTION (kill, trap or errno: EPERM) and allows everything else, through VIA (seccomp
// or prctl), as an allow-list written before mseal existed would; then runs this program again
// as CMD ARGS, or the program CMD names when it is an absolute path. The harness injects an
// mseal into every new program it seals, and probes it on itself. ACTION kill-seccomp: kill
// for seccomp(2) too, as an allow-list that lets no further filter in (the harness injects
// seccomp(2) to add its own filters).
int FilterExec(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::string action = argv[2], via = argv[3];
  const uint32_t verdict = action.rfind("kill", 0) == 0 ? SECCOMP_RET_KILL_PROCESS
                           : action == "trap"           ? SECCOMP_RET_TRAP
                                                        : SECCOMP_RET_ERRNO | EPERM;
  const uint32_t also = action == "kill-seccomp" ? SYS_seccomp : 462;
  sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 462 /* mseal */, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, also, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, verdict),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(insns)), insns};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const long installed = via == "prctl" ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
                                        : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  if (installed != 0) {
    std::fprintf(stderr, "testee: filter: %s\n", std::strerror(errno));
    return 3;
  }
  const bool other = argv[4][0] == '/';
  std::vector<char*> args;
  if (!other) args.push_back(const_cast<char*>(g_self));
  for (int i = 4; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(other ? argv[4] : g_self, args.data());
  std::fprintf(stderr, "testee: exec: %s\n", std::strerror(errno));
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  g_self = argv[0];
  if (argc < 2) return 2;
  const std::string cmd = argv[1];
  const char* a = argc > 2 ? argv[2] : "";
  const char* b = argc > 3 ? argv[3] : "";
  if (cmd == "exit") return std::atoi(a);
  if (cmd == "raise") return raise(std::atoi(a)) == 0 ? 0 : 1;
  if (cmd == "threads") return Threads(std::atoi(a));
  if (cmd == "fork") return Fork();
  if (cmd == "fork-many") return ForkMany(std::atoi(a));
  if (cmd == "vfork-exec") return VforkExec();
  if (cmd == "clone-files") return CloneFiles(a);
  if (cmd == "exec-chain") return ExecChain(std::atoi(a));
  if (cmd == "exec-from-thread") return ExecFromThread();
  if (cmd == "open") return Open(a);
  if (cmd == "device") return Device(a);
  if (cmd == "quiet_copies") return QuietCopies(a);
  if (cmd == "low-nofile") return LowNofile(a, b, false);
  if (cmd == "low-nofile-raw") return LowNofile(a, b, true);
  if (cmd == "nofile-hard") return NofileHard(a, b);
  if (cmd == "nofile-show") return NofileShow();
  if (cmd == "stat") return Stat(a, true);
  if (cmd == "lstat") return Stat(a, false);
  if (cmd == "access") return Access(a);
  if (cmd == "readlink") return ReadLink(a);
  if (cmd == "reach-tracer") return ReachTracer();
  if (cmd == "process-vm-write") return ProcessVmWrite();
  if (cmd == "openat") return OpenAt(a, b);
  if (cmd == "chdir-open") return ChdirOpen(a, b);
  if (cmd == "chdir-cwd") return ChdirCwd(a, b);
  if (cmd == "list") return List(a);
  if (cmd == "list-raw") return ListRaw(a);
  if (cmd == "aio-write") return AioWrite(a);
  if (cmd == "netlink") return Netlink();
  if (cmd == "syscall-loop") return SyscallLoop(std::atol(a));
  if (cmd == "wait-signal") return WaitSignal(a);
  if (cmd == "stop-cont") return StopCont();
  if (cmd == "exit-leaves-child") return ExitLeavesChild(a, std::atol(b));
  if (cmd == "scm-rights") return ScmRights(a, b);
  if (cmd == "proc-reopen") return ProcReopen(a);
  if (cmd == "remap-file-pages") return RemapFilePages(a);
  if (cmd == "scratch-guard") return ScratchGuard(a, b);
  if (cmd == "filter-exec") return FilterExec(argc, argv);
  if (cmd == "strict") return Strict(a, b);
  if (cmd == "strict-thread") return StrictThread();
  if (cmd == "own-filter") return OwnFilter(a, b, argc > 4 ? static_cast<unsigned>(std::strtoul(argv[4], nullptr, 0)) : 0);
  if (cmd == "close-range") return CloseRange(a);
  if (cmd == "fork-device") return ForkDevice(a);
  if (cmd == "credentials") return Credentials(a);
  if (cmd == "thread-credentials") return ThreadCredentials(a);
  if (cmd == "thread-credentials-early") return ThreadCredentialsEarly(a);
  if (cmd == "exec-keep") return ExecKeep(a);
  if (cmd == "read-fd") return ReadFd(std::atoi(a));
  if (cmd == "ioctl-verbs") return IoctlVerbs(std::atoi(a));
  if (cmd == "io-uring") return IoUring();
  if (cmd == "read-proxied") return ReadProxied(a, std::atol(b));
  if (cmd == "write-proxied") return WriteProxied(a, b, argc > 4 ? std::atol(argv[4]) : 1);
  if (cmd == "range-fd-loop") return RangeFdLoop(std::atol(a), b);
  if (cmd == "threads-device") return ThreadsDevice(a, std::atoi(b));
  if (cmd == "clone-files-late") return CloneFilesLate(a);
  if (cmd == "freeze-spin") return FreezeSpin(a, std::atol(b), argc > 4 ? std::atoi(argv[4]) : 0);
  if (cmd == "freeze-fionbio")
    return FreezeFionbio(a, std::atol(b), argc > 4 ? std::atoi(argv[4]) : 0);
  if (cmd == "freeze-exec") return FreezeExec(a);
  if (cmd == "freeze-vfork") return FreezeVfork(a, std::atol(b));
  if (cmd == "freeze-leader-exit") return FreezeLeaderExit(a, std::atol(b));
  if (cmd == "freeze-child-race") return FreezeChildRace(a, std::atol(b), argc > 4 ? std::atoi(argv[4]) : 1);
  if (cmd == "open-window")
    return OpenWindow(a, std::atol(b), argc > 4 ? std::atoi(argv[4]) : 2,
                      argc > 5 && std::string(argv[5]) == "processes");
  if (cmd == "freeze-overlap") return FreezeOverlap(a, std::atol(b));
  if (cmd == "freeze-stress") return FreezeStress(a, std::atol(b), argc > 4 ? argv[4] : "/dev/null");
  std::fprintf(stderr, "testee: unknown command %s\n", cmd.c_str());
  return 2;
}
