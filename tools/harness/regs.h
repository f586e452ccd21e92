// Regs: a tracee thread's user registers, with syscall-shaped accessors (x86-64).
//
// The x86-64 syscall ABI: the number in rax (the kernel keeps the entry value in orig_rax,
// and reads the syscall to run from orig_rax after a ptrace/seccomp stop), arguments in
// rdi, rsi, rdx, r10, r8, r9, the result in rax, and `syscall` is a 2-byte instruction (0f 05),
// so at any syscall stop ip - 2 re-executes it. The instruction clobbers only rax, rcx and
// r11; compiled code (glibc's INTERNAL_SYSCALL) therefore assumes every argument register
// survives the call, and anything the harness changes must be put back at syscall exit.
//
// Only x86-64 is implemented; an arm64 port would fill the same accessors from
// NT_PRSTATUS / NT_ARM_SYSTEM_CALL regsets.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>

#include "abi/result.h"

namespace rxp::harness {

class Regs {
 public:
  static constexpr int kSyscallInsnSize = 2;

  // PTRACE_GETREGS / PTRACE_SETREGS. ESRCH means the thread is gone (or not stopped).
  static Result<Regs> Get(pid_t tid);
  Result<void> Set(pid_t tid) const;

  // The syscall the kernel will run (or ran): orig_rax. -1 skips it (nothing runs; rax is the
  // result), the documented way to cancel a syscall at an entry/seccomp stop.
  long syscall_nr() const { return static_cast<long>(r_.orig_rax); }
  void set_syscall_nr(long nr) { r_.orig_rax = static_cast<unsigned long long>(nr); }

  uint64_t arg(int i) const;
  void set_arg(int i, uint64_t value);

  long result() const { return static_cast<long>(r_.rax); }
  void set_result(long value) { r_.rax = static_cast<unsigned long long>(value); }

  uint64_t ip() const { return r_.rip; }
  void set_ip(uint64_t ip) { r_.rip = ip; }
  uint64_t sp() const { return r_.rsp; }

  // Cancels the syscall at an entry/seccomp stop: it returns `result` without running.
  void SkipSyscall(long result) {
    set_syscall_nr(-1);
    set_result(result);
  }

  // Makes the thread execute `nr` again from the `syscall` instruction it just left (used at an
  // exit stop to inject a syscall, or at an entry stop to replay the original one).
  void RewindToSyscall(long nr) {
    r_.rip -= kSyscallInsnSize;
    r_.rax = static_cast<unsigned long long>(nr);
  }

  const user_regs_struct& raw() const { return r_; }

 private:
  user_regs_struct r_{};
};

// The kernel's restart codes (include/linux/errno.h). A syscall-exit stop that shows one of
// these is not the end of the syscall: the kernel rewinds ip and re-issues it (or
// restart_syscall) after signal handling, so its result register must not be overwritten.
inline constexpr long kERestartSys = 512;
inline constexpr long kERestartNoIntr = 513;
inline constexpr long kERestartNoHand = 514;
inline constexpr long kERestartRestartBlock = 516;
inline bool IsRestartCode(long result) {
  return result == -kERestartSys || result == -kERestartNoIntr ||
         result == -kERestartNoHand || result == -kERestartRestartBlock;
}

}  // namespace rxp::harness
