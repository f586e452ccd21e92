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
  if (at_ == At::kSeccompStop && runs_ == 0) {
    // Replace the syscall about to run. The kernel re-reads orig_rax and re-runs the filter
    // on the new registers after the stop (__seccomp_filter, recheck_after_trace).
    regs.set_syscall_nr(nr);
  } else {
    regs.RewindToSyscall(nr);
  }
  RXP_TRY(regs.Set(tid_));
  RXP_TRY(StepOverSyscall());
  ++runs_;
  auto after = Regs::Get(tid_);
  if (!after.ok()) return std::move(after).error();
  return after->result();
}

// PTRACE_SINGLESTEP over the `syscall` instruction: the call runs with no syscall-entry stop,
// and a single-stepped syscall is reported once, at its exit, as a SIGTRAP with TRAP_BRKPT
// (syscall_exit_work -> ptrace_report_syscall_exit(regs, step) -> user_single_step_report),
// which is discarded by not passing it on. One stop per injected call instead of two
// (PTRACE_SYSCALL's entry and exit stops). The next PTRACE_CONT or PTRACE_SYSCALL of the
// thread turns single-stepping off again (user_disable_single_step clears the forced TF).
Result<void> SyscallInjector::StepOverSyscall() {
  int sig = 0;
  for (;;) {
    if (ptrace(PTRACE_SINGLESTEP, tid_, nullptr, sig) != 0)
      return Fail(errno, "PTRACE_SINGLESTEP({}) while injecting: {}", tid_, std::strerror(errno));
    sig = 0;
    int status = 0;
    const pid_t got = waiter_.Wait(tid_, &status);
    if (got < 0) return Fail(errno, "waitpid({}) while injecting: {}", tid_, std::strerror(errno));
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      death_status_ = status;
      return Fail(ESRCH, "thread {} died while the harness was injecting a syscall", tid_);
    }
    if (!WIFSTOPPED(status)) continue;
    const int stopsig = WSTOPSIG(status);
    const int event = status >> 16;
    // Dying (SIGKILL, another thread's exit_group): let it go and collect the status. A
    // seccomp stop of the injected call, a group-stop: step on.
    if (event != 0) continue;
    if (stopsig == (SIGTRAP | 0x80)) continue;  // a syscall stop: not asked for, step on
    if (stopsig == SIGTRAP) {
      siginfo_t info{};
      if (ptrace(PTRACE_GETSIGINFO, tid_, nullptr, &info) == 0 && info.si_code == TRAP_BRKPT)
        return Ok();  // the step report: the call has run
    }
    // A signal-delivery stop: hold the signal back until the thread has its registers again.
    if (deferred_ != nullptr) deferred_->push_back(stopsig);
  }
}

}  // namespace rxp::harness
