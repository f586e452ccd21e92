#include "tools/harness/regs.h"

#include <sys/ptrace.h>

#include <cerrno>
#include <cstring>

namespace rxp::harness {
namespace {

// Argument registers in ABI order (arch/x86/entry/calling.h).
using Field = unsigned long long user_regs_struct::*;
constexpr Field kArgRegs[6] = {
    &user_regs_struct::rdi, &user_regs_struct::rsi, &user_regs_struct::rdx,
    &user_regs_struct::r10, &user_regs_struct::r8,  &user_regs_struct::r9,
};

}  // namespace

Result<Regs> Regs::Get(pid_t tid) {
  Regs regs;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs.r_) != 0)
    return Fail(errno, "PTRACE_GETREGS({}): {}", tid, std::strerror(errno));
  return regs;
}

Result<void> Regs::Set(pid_t tid) const {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &r_) != 0)
    return Fail(errno, "PTRACE_SETREGS({}): {}", tid, std::strerror(errno));
  return Ok();
}

uint64_t Regs::arg(int i) const { return r_.*kArgRegs[i]; }

void Regs::set_arg(int i, uint64_t value) { r_.*kArgRegs[i] = value; }

}  // namespace rxp::harness
