// rxp_stop_floor [CALLS]: what one interposed system call costs on this machine at the least,
// whatever the interposer does with it -- the floor under benchmark (b) of issue 4 (the verbs
// control path under `rdmaproxy run`). It times one cheap system call (getppid) three ways:
//   native       the call alone;
//   ptrace       stopped by a seccomp filter (SECCOMP_RET_TRACE) in a tracer that does nothing
//                but PTRACE_CONT -- one tracee -> tracer -> tracee round trip per call, the stop
//                every ptrace interposer pays (the harness adds its own work on top);
//   polling      the same, the tracer polling waitpid(WNOHANG) and yielding instead of
//                sleeping in it (`rdmaproxy run --stop-poll-us`, tools/harness/stop_waiter.h):
//                the tracer is never woken, only the tracee;
//   proxying     the least a ptrace proxy does in a stop where it answers the call itself:
//                read the registers (the call and its arguments), read 64 bytes of the request
//                the first argument points to (process_vm_readv), set the result and skip the
//                call (PTRACE_SETREGS), continue;
//   user-notif   sent by a seccomp filter (SECCOMP_RET_USER_NOTIF) to a supervisor that answers
//                at once -- the round trip of the other out-of-process design
//                (seccomp_unotify(2)), for comparison.
// Prints one line per way: microseconds per call. Fails only when a way cannot be set up (no
// seccomp, ptrace refused); the user-notif row says "unsupported" on a kernel without it.
// Asserts nothing about timing. tests/vm/cases/bench_control_path.sh turns the figures into the
// ratio floor that the loop's own stop count implies.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "abi/unique_fd.h"

namespace {

using rxp::UniqueFd;
using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "rxp_stop_floor: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Installs a filter that gives getppid `action` and allows everything else; returns
// seccomp(2)'s result (the listener fd with SECCOMP_FILTER_FLAG_NEW_LISTENER).
long InstallGetppidFilter(uint32_t action, unsigned flags) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

// `calls` getppid calls; microseconds per call. The first argument (which getppid ignores)
// points to a 64-byte "request", for the proxying tracer to read.
double TimeGetppid(int calls) {
  static char request[64] = "request";
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) ::syscall(SYS_getppid, request);
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
}

// The child's figure comes back over a pipe: the child is the one that knows its own time.
double ReadFigure(int fd) {
  double us = -1;
  if (::read(fd, &us, sizeof(us)) != static_cast<ssize_t>(sizeof(us))) return -1;
  return us;
}

void WriteFigure(int fd, double us) {
  if (::write(fd, &us, sizeof(us)) != static_cast<ssize_t>(sizeof(us))) ::_exit(3);
}

// What the tracer does in a seccomp stop: nothing but continue, or the least a proxy does.
enum class StopWork { kNone, kProxy };

// Reads the registers and the 64-byte request at the first argument, then answers the call
// itself: orig_rax -1 skips it, rax is its result (as the harness completes a forwarded call).
void Proxy(pid_t child) {
  user_regs_struct regs{};
  if (::ptrace(PTRACE_GETREGS, child, nullptr, &regs) != 0) Die("PTRACE_GETREGS");
  char request[64];
  iovec local{request, sizeof(request)};
  iovec remote{reinterpret_cast<void*>(regs.rdi), sizeof(request)};
  if (::process_vm_readv(child, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof(request)))
    Die("process_vm_readv");
  regs.orig_rax = static_cast<unsigned long long>(-1);
  regs.rax = 1;
  if (::ptrace(PTRACE_SETREGS, child, nullptr, &regs) != 0) Die("PTRACE_SETREGS");
}

// `poll`: wait for each stop as `rdmaproxy run --stop-poll-us` does, never sleeping.
double PtraceStop(int calls, bool poll, StopWork work = StopWork::kNone) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) Die("pipe");
  UniqueFd in(p[0]), out(p[1]);
  const pid_t child = ::fork();
  if (child < 0) Die("fork");
  if (child == 0) {
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) ::_exit(2);
    ::raise(SIGSTOP);  // the tracer sets its options at this stop
    if (InstallGetppidFilter(SECCOMP_RET_TRACE, 0) != 0) ::_exit(2);
    WriteFigure(out.get(), TimeGetppid(calls));
    ::_exit(0);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) Die("waitpid (first stop)");
  if (!WIFSTOPPED(status)) {
    errno = EPERM;
    Die("the child could not be traced (PTRACE_TRACEME refused?)");
  }
  if (::ptrace(PTRACE_SETOPTIONS, child, nullptr, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL) != 0)
    Die("PTRACE_SETOPTIONS");
  int signal = 0;
  for (;;) {
    if (::ptrace(PTRACE_CONT, child, nullptr, signal) != 0) Die("PTRACE_CONT");
    pid_t got;
    while ((got = ::waitpid(child, &status, poll ? WNOHANG : 0)) == 0) ::sched_yield();
    if (got != child) Die("waitpid");
    if (WIFEXITED(status) || WIFSIGNALED(status)) break;
    // A seccomp stop resumes with no signal; any other stop passes its signal on.
    const bool seccomp_stop = (status >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8));
    signal = seccomp_stop ? 0 : WSTOPSIG(status);
    if (seccomp_stop && work == StopWork::kProxy) Proxy(child);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = ECHILD;
    Die("the traced child failed");
  }
  return ReadFigure(in.get());
}

std::optional<double> UserNotif(int calls) {
  int p[2], q[2];
  if (::pipe2(p, O_CLOEXEC) != 0 || ::pipe2(q, O_CLOEXEC) != 0) Die("pipe");
  UniqueFd figure_in(p[0]), figure_out(p[1]), fd_in(q[0]), fd_out(q[1]);
  const pid_t child = ::fork();
  if (child < 0) Die("fork");
  if (child == 0) {
    const long listener = InstallGetppidFilter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
    const int number = listener < 0 ? -errno : static_cast<int>(listener);
    if (::write(fd_out.get(), &number, sizeof(number)) != static_cast<ssize_t>(sizeof(number)))
      ::_exit(3);
    if (listener < 0) ::_exit(0);
    WriteFigure(figure_out.get(), TimeGetppid(calls));
    ::_exit(0);
  }
  int number = 0;
  if (::read(fd_in.get(), &number, sizeof(number)) != static_cast<ssize_t>(sizeof(number)))
    Die("reading the listener's number");
  std::optional<double> result;
  if (number >= 0) {
    // The supervisor takes the child's listener (pidfd_getfd: the parent may ptrace its child).
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
    UniqueFd listener(pidfd.get() < 0 ? -1 : static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), number, 0)));
    if (listener.get() < 0) Die("pidfd_getfd (the child's listener)");
    for (int i = 0; i < calls; ++i) {
      seccomp_notif request{};
      if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) Die("NOTIF_RECV");
      seccomp_notif_resp response{};
      response.id = request.id;
      response.val = 1;
      if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, &response) != 0) Die("NOTIF_SEND");
    }
    result = ReadFigure(figure_in.get());
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = ECHILD;
    Die("the notifying child failed");
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 3000;
  if (calls <= 0) {
    std::fprintf(stderr, "usage: rxp_stop_floor [CALLS]\n");
    return 2;
  }
  const double native = TimeGetppid(calls);
  const double ptrace_us = PtraceStop(calls, false);
  const double polling_us = PtraceStop(calls, true);
  const double proxying_us = PtraceStop(calls, false, StopWork::kProxy);
  const std::optional<double> notif_us = UserNotif(calls);
  if (ptrace_us < 0 || polling_us < 0 || proxying_us < 0) {
    errno = EPROTO;
    Die("no figure from the traced child");
  }
  std::printf("interposed system call round trip, %d calls each (us per call):\n", calls);
  std::printf("  native        %8.2f\n", native);
  std::printf("  ptrace        %8.2f   (seccomp stop, tracer does PTRACE_CONT only)\n", ptrace_us);
  std::printf("  polling       %8.2f   (the same, the tracer polling waitpid instead of sleeping)\n",
              polling_us);
  std::printf("  proxying      %8.2f   (the same, the tracer reading the registers and 64 bytes "
              "of the request, answering the call itself)\n", proxying_us);
  if (notif_us)
    std::printf("  user-notif    %8.2f   (seccomp user notification, answered at once)\n", *notif_us);
  else
    std::printf("  user-notif    unsupported on this kernel\n");
  return 0;
}
