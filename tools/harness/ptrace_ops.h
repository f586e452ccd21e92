// Thin wrappers over the ptrace requests the tracer uses, returning Result.
//
// ESRCH is normal anywhere: a tracee can be killed (SIGKILL, another thread's exit_group)
// between two requests. Callers treat it as "gone, its exit status will follow" rather than
// as a failure (sandbox2's monitor does the same).
#pragma once

#include <sys/ptrace.h>
#include <sys/types.h>

#include <array>
#include <cstdint>

#include "abi/result.h"

namespace rxp::harness {

// Options for every tracee: stops for seccomp TRACE, clean syscall-stop reporting,
// auto-attach of every new thread/process, exec and exit events, and SIGKILL of every tracee if
// the harness dies (EXITKILL; inherited by auto-attached tracees).
inline constexpr unsigned long kPtraceOptions = 0UL |
    PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |
    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT;

struct SyscallInfo {
  uint8_t op = 0;                          // PTRACE_SYSCALL_INFO_*  // ENTRY / EXIT / SECCOMP
  long nr = -1;
  uint32_t arch = 0;                       // ENTRY / SECCOMP: AUDIT_ARCH_* of the call
  uint64_t instruction_pointer = 0;        // ENTRY / SECCOMP
  std::array<uint64_t, 6> args{};
  uint32_t ret_data = 0;  // SECCOMP: SECCOMP_RET_DATA of the rule that fired
  int64_t rval = 0;       // EXIT
};

// PTRACE_GET_SYSCALL_INFO (Linux 5.3): nr/args/ret_data at a seccomp stop in one call,
// and the entry/exit distinction at syscall stops, without PTRACE_GETREGS.
Result<SyscallInfo> GetSyscallInfo(pid_t tid);

Result<unsigned long> GetEventMsg(pid_t tid);

// PTRACE_CONT / PTRACE_SYSCALL / PTRACE_LISTEN.
enum class PtraceResume { kCont, kSyscall, kListen };
Result<void> ResumeTask(pid_t tid, PtraceResume how, int sig);

// PTRACE_INTERRUPT (PTRACE_SEIZEd tracees only): the tracee reports a ptrace-stop soon — the
// next one it would have reported anyway, else PTRACE_EVENT_STOP — and a syscall it sleeps in
// interruptibly is interrupted (ptrace(2)). A tracee already in a ptrace-stop reports one more
// stop after it is resumed (ptrace_interrupt: "another trap will happen after the current trap
// is ended").
Result<void> InterruptTask(pid_t tid);

}  // namespace rxp::harness
