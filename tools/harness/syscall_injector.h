// SyscallInjector: makes a stopped tracee thread execute syscalls chosen by the harness.
//
// Uses (PRoot's "chaining", gVisor's ptrace stub): at an openat exit, run
// fcntl(fd, F_DUPFD, base) + close(fd) to move a new device fd into the reserved range; at the
// first stop of a new address space, run mmap to create the scratch region.
//
// Two starting points (research §4.4):
//   * a seccomp stop (syscall entry, not yet run): the pending syscall is replaced by the first
//     injected one (orig_rax and the argument registers). The original syscall is lost; the
//     caller replays it afterwards (Regs::RewindToSyscall on the saved registers), which makes
//     the thread issue it again — through the filter, so the harness sees a fresh seccomp stop
//     for it.
//   * a syscall-exit stop: ip is rewound onto the `syscall` instruction with rax = the injected
//     number.
// Either way PTRACE_SINGLESTEP runs it, and the thread stops once, after it (the kernel reports
// a single-stepped syscall at its exit with a SIGTRAP, which is discarded); a seccomp stop of
// the injected call (calls pass through the filter like any other) is simply stepped on.
// After the last Run the thread sits in that stop with meaningless registers; the caller must
// install the registers it wants before resuming it (with PTRACE_CONT or PTRACE_SYSCALL, which
// end single-stepping).
//
// Injection waits for this one thread (waitpid(tid, __WALL), through the tracer's
// StopWaiter); other tracees' events stay queued in the kernel for the main loop. Signals that
// arrive meanwhile are held back (the thread must not enter a signal handler with borrowed
// registers) and recorded in `deferred_signals`, for the caller to deliver when it resumes the
// thread. A group-stop that begins meanwhile is continued through. Only short, non-blocking
// syscalls are injected.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "abi/result.h"
#include "tools/harness/regs.h"
#include "tools/harness/stop_waiter.h"

namespace rxp::harness {

class SyscallInjector {
 public:
  enum class At { kSeccompStop, kExitStop };

  // `regs`: the thread's registers at the stop it is in now.
  // `waiter`: how to wait for the thread's stops (the tracer's, polling or not).
  SyscallInjector(pid_t tid, const Regs& regs, At at, std::vector<int>* deferred_signals,
                  StopWaiter& waiter)
      : tid_(tid), base_(regs), at_(at), deferred_(deferred_signals), waiter_(waiter) {}

  // Runs one syscall; returns its raw result (-errno on failure). ESRCH when the thread died
  // meanwhile (death_status() then has its wait status, which the caller must process).
  Result<long> Run(long nr, const std::array<uint64_t, 6>& args);

  int runs() const { return runs_; }
  const std::optional<int>& death_status() const { return death_status_; }

 private:
  Result<void> StepOverSyscall();

  pid_t tid_;
  Regs base_;
  At at_;
  std::vector<int>* deferred_;
  StopWaiter& waiter_;
  int runs_ = 0;
  std::optional<int> death_status_;
};

}  // namespace rxp::harness
