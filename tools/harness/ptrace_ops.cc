#include "tools/harness/ptrace_ops.h"

#include <sys/ptrace.h>

#include <cerrno>
#include <cstring>

namespace rxp::harness {

Result<SyscallInfo> GetSyscallInfo(pid_t tid) {
  __ptrace_syscall_info raw{};
  if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(raw), &raw) < 0)
    return Fail(errno, "PTRACE_GET_SYSCALL_INFO({}): {}", tid, std::strerror(errno));
  SyscallInfo info;
  info.op = raw.op;
  info.arch = raw.arch;
  info.instruction_pointer = raw.instruction_pointer;
  switch (raw.op) {
    case PTRACE_SYSCALL_INFO_ENTRY:
      info.nr = static_cast<long>(raw.entry.nr);
      for (size_t i = 0; i < 6; ++i) info.args[i] = raw.entry.args[i];
      break;
    case PTRACE_SYSCALL_INFO_SECCOMP:
      info.nr = static_cast<long>(raw.seccomp.nr);
      for (size_t i = 0; i < 6; ++i) info.args[i] = raw.seccomp.args[i];
      info.ret_data = raw.seccomp.ret_data;
      break;
    case PTRACE_SYSCALL_INFO_EXIT:
      info.rval = raw.exit.rval;
      break;
    default:
      break;
  }
  return info;
}

Result<unsigned long> GetEventMsg(pid_t tid) {
  unsigned long msg = 0;
  if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0)
    return Fail(errno, "PTRACE_GETEVENTMSG({}): {}", tid, std::strerror(errno));
  return msg;
}

Result<void> ResumeTask(pid_t tid, PtraceResume how, int sig) {
  static constexpr __ptrace_request kRequests[] = {PTRACE_CONT, PTRACE_SYSCALL, PTRACE_LISTEN};
  const auto request = kRequests[static_cast<int>(how)];
  if (ptrace(request, tid, nullptr, how == PtraceResume::kListen ? 0 : sig) != 0)
    return Fail(errno, "ptrace resume {} of {}: {}", static_cast<int>(how), tid,
                std::strerror(errno));
  return Ok();
}

Result<void> InterruptTask(pid_t tid) {
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, 0) != 0)
    return Fail(errno, "PTRACE_INTERRUPT({}): {}", tid, std::strerror(errno));
  return Ok();
}

}  // namespace rxp::harness
