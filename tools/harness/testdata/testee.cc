// rxp_harness_testee: small scenarios the harness tests run under the tracer. Each subcommand
// prints "key=value" lines the test parses; errors print "key=-<errno name>".
//
//   exit CODE | raise SIG | threads N | fork | fork-many N | vfork-exec | exec-chain N |
//   exec-from-thread | clone-files PATH | open PATH | device PATH | stat PATH | lstat PATH | access PATH |
//   readlink PATH | openat DIR NAME | chdir-open DIR NAME | list DIR | netlink |
//   syscall-loop N | wait-signal READY_FILE | stop-cont | scm-rights PATH [ALIAS] |
//   proc-reopen PATH |
//   close-range PATH | fork-device PATH | exec-keep PATH | ioctl-verbs FD | io-uring |
//   read-proxied PATH N | write-proxied PATH TEXT N | range-fd-loop N [PATH] | threads-device PATH N | clone-files-late PATH
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

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
  char buf[8];
  Print("read", Ret(read(fd, buf, 0)));
  Print("close", Ret(close(fd)));
  Print("read_closed", Ret(read(fd, buf, 0)));
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

int Netlink() {
  Print("rdma", Ret(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, kNetlinkRdma)));
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
  close(open(ready_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  while (g_signal == 0) pause();
  Print("signal", g_signal);
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
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -errno;
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
  if (sendmsg(sv[0], &msg, 0) != 1) {
    int e = errno;
    close(sv[0]);
    close(sv[1]);
    return -e;
  }
  std::memset(control, 0, sizeof control);
  msg.msg_controllen = sizeof control;
  if (recvmsg(sv[1], &msg, MSG_CMSG_CLOEXEC) != 1) return -errno;
  int received = -1;
  std::memcpy(&received, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof received);
  close(sv[0]);
  close(sv[1]);
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

// Reads an ordinary file through an fd in the reserved range, N times; with a PATH, opens that
// (proxied) device first.
int RangeFdLoop(long n, const char* device) {
  if (device[0] != '\0' && open(device, O_RDWR | O_CLOEXEC) < 0) return 1;
  int fd = dup2(open("/dev/zero", O_RDONLY | O_CLOEXEC), 800);
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
  if (cmd == "stat") return Stat(a, true);
  if (cmd == "lstat") return Stat(a, false);
  if (cmd == "access") return Access(a);
  if (cmd == "readlink") return ReadLink(a);
  if (cmd == "openat") return OpenAt(a, b);
  if (cmd == "chdir-open") return ChdirOpen(a, b);
  if (cmd == "list") return List(a);
  if (cmd == "netlink") return Netlink();
  if (cmd == "syscall-loop") return SyscallLoop(std::atol(a));
  if (cmd == "wait-signal") return WaitSignal(a);
  if (cmd == "stop-cont") return StopCont();
  if (cmd == "scm-rights") return ScmRights(a, b);
  if (cmd == "proc-reopen") return ProcReopen(a);
  if (cmd == "close-range") return CloseRange(a);
  if (cmd == "fork-device") return ForkDevice(a);
  if (cmd == "exec-keep") return ExecKeep(a);
  if (cmd == "read-fd") return ReadFd(std::atoi(a));
  if (cmd == "ioctl-verbs") return IoctlVerbs(std::atoi(a));
  if (cmd == "io-uring") return IoUring();
  if (cmd == "read-proxied") return ReadProxied(a, std::atol(b));
  if (cmd == "write-proxied") return WriteProxied(a, b, argc > 4 ? std::atol(argv[4]) : 1);
  if (cmd == "range-fd-loop") return RangeFdLoop(std::atol(a), b);
  if (cmd == "threads-device") return ThreadsDevice(a, std::atoi(b));
  if (cmd == "clone-files-late") return CloneFilesLate(a);
  std::fprintf(stderr, "testee: unknown command %s\n", cmd.c_str());
  return 2;
}
