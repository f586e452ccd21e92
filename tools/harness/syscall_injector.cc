#include "tools/harness/syscall_injector.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "tools/harness/ptrace_ops.h"

namespace rxp::harness {

Result<long> SyscallInjector::Run(long nr, const std::array<uint64_t, 6>& args) {
  if (death_status_) return Fail(ESRCH, "thread {} is gone", tid_);
  Regs regs = base_;
  for (int i = 0; i < 6; ++i) regs.set_arg(i, args[static_cast<size_t>(i)]);
  Want first;
  if (at_ == At::kSeccompStop && runs_ == 0) {
    // Replace the syscall about to run. The kernel re-reads orig_rax and re-runs the filter
    // on the new registers after the stop (__seccomp_filter, recheck_after_trace).
    regs.set_syscall_nr(nr);
    first = Want::kExit;
  } else {
    regs.RewindToSyscall(nr);
    first = Want::kEntry;
  }
  RXP_TRY(regs.Set(tid_));
  RXP_TRY(ResumeUntil(first));
  if (first == Want::kEntry) RXP_TRY(ResumeUntil(Want::kExit));
  ++runs_;
  auto after = Regs::Get(tid_);
  if (!after.ok()) return std::move(after).error();
  return after->result();
}

// PTRACE_SYSCALL until the thread reaches the wanted syscall stop.
Result<void> SyscallInjector::ResumeUntil(Want want) {
  int sig = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, tid_, nullptr, sig) != 0)
      return Fail(errno, "PTRACE_SYSCALL({}) while injecting: {}", tid_, std::strerror(errno));
    sig = 0;
    int status = 0;
    pid_t got;
    do {
      got = waitpid(tid_, &status, __WALL);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return Fail(errno, "waitpid({}) while injecting: {}", tid_, std::strerror(errno));
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      death_status_ = status;
      return Fail(ESRCH, "thread {} died while the harness was injecting a syscall", tid_);
    }
    if (!WIFSTOPPED(status)) continue;
    const int stopsig = WSTOPSIG(status);
    const int event = status >> 16;
    if (stopsig == (SIGTRAP | 0x80)) {
      auto info = GetSyscallInfo(tid_);
      if (!info.ok()) return std::move(info).error();
      const bool at_exit = info->op == PTRACE_SYSCALL_INFO_EXIT;
      if (at_exit == (want == Want::kExit)) return Ok();
      continue;  // the other kind of syscall stop: keep going
    }
    if (event == PTRACE_EVENT_EXIT) {
      // Dying (SIGKILL, or another thread's exit_group): let it go and collect the status.
      continue;
    }
    if (event != 0) continue;  // seccomp stop of the injected call, group-stop: go on
    // A signal-delivery stop: hold the signal back until the thread has its registers again.
    if (deferred_ != nullptr) deferred_->push_back(stopsig);
  }
}

}  // namespace rxp::harness
