// A seccomp-BPF program compiled from a declarative rule table with libseccomp.
//
// The harness decides what stops with a static filter: each rule names a syscall, up to a few
// argument conditions (all must hold) and an action. Rules for the same syscall are alternatives.
// TRACE actions carry a 16-bit tag in SECCOMP_RET_DATA that names the rule. The tracer does not
// take the tag a stop reports on trust (a filter the program stacks on top can set it): it runs
// the compiled programs on the stopped call itself (seccomp_run.h) and reads the tag from that.
//
// The program is compiled in the parent (libseccomp allocates) and installed in the child
// between fork and exec with InstallFilter, which only makes two syscalls (the nsjail/sandbox2
// split). Anything the filter does not name is allowed; other architectures (i386 int 0x80,
// x32) get ENOSYS, so no second syscall table can bypass the rules.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "abi/result.h"

namespace rxp::harness {

// One argument comparison, evaluated on the full 64-bit register. Use kMaskedEq with a mask
// of 0xffffffff (or a sub-mask) to compare what the kernel sees for 32-bit parameters: the
// high half of the register is then ignored, exactly as the kernel truncates it.
struct ArgCondition {
  enum class Op { kMaskedEq, kEq, kGe, kGt, kLe, kLt };
  unsigned arg = 0;  // 0..5
  Op op = Op::kEq;
  uint64_t value = 0;
  uint64_t mask = 0;  // kMaskedEq only: (arg & mask) == value
};

struct FilterAction {
  enum class Kind { kAllow, kTrace, kErrno };
  Kind kind = Kind::kAllow;
  uint16_t data = 0;  // kTrace: SECCOMP_RET_DATA tag; kErrno: the errno
};

struct FilterRule {
  long nr = -1;  // syscall number (x86-64)
  std::vector<ArgCondition> conditions;  // all must hold; at most one per argument (libseccomp)
  FilterAction action;
};

// A compiled program. prog() points into this object: keep it alive until installed.
class BpfProgram {
 public:
  BpfProgram() = default;
  explicit BpfProgram(std::vector<sock_filter> insns) : insns_(std::move(insns)) {}
  sock_fprog prog() const {
    return sock_fprog{static_cast<unsigned short>(insns_.size()),
                      const_cast<sock_filter*>(insns_.data())};
  }
  size_t size() const { return insns_.size(); }
  std::span<const sock_filter> insns() const { return insns_; }

 private:
  std::vector<sock_filter> insns_;
};

// Compiles `rules` (default action: allow) for the native architecture.
Result<BpfProgram> CompileFilter(std::span<const FilterRule> rules);

// Child side, between fork and exec: PR_SET_NO_NEW_PRIVS (required for an unprivileged filter,
// seccomp(2)) then SECCOMP_SET_MODE_FILTER. Async-signal-safe; returns 0 or an errno.
int InstallFilter(const sock_fprog& prog);

// libseccomp's name for a syscall number ("openat"), or "syscall_<nr>".
std::string SyscallName(long nr);

}  // namespace rxp::harness
