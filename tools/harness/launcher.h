// Starting the traced program: fork, PTRACE_SEIZE, filter, exec.
//
// The order matters (research §4.1): the child waits on a pipe until the parent has seized it
// with PTRACE_O_TRACESECCOMP, and only then installs the filter — a RET_TRACE rule with no
// tracer listening fails the syscall with ENOSYS (__seccomp_filter) — and execs. The filter
// is compiled in the parent; the child only makes async-signal-safe calls. Unprivileged use
// needs nothing more: a parent may trace its own children under Yama ptrace_scope 0 and 1,
// and PR_SET_NO_NEW_PRIVS makes the filter installable without CAP_SYS_ADMIN (which also
// means set-user-ID programs run without their privileges under the harness).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "abi/result.h"
#include "tools/harness/seccomp_filter.h"

namespace rxp::harness {

// argv[0] as execvp would find it: itself when it contains a '/', else the first executable
// match in $PATH. ENOENT/EACCES with a reason when there is none.
Result<std::string> FindProgram(const std::string& name);

struct Launched {
  pid_t pid = -1;
  // Set when the program could not be executed (or the filter not installed): the child then
  // exits with status 127, which the tracer still has to collect.
  std::optional<Error> exec_error;
};

// Forks `program` with `argv` and the current environment, seized with kPtraceOptions, under
// `filter`. On return the child is at (or past) its exec; run a Tracer on it at once.
Result<Launched> LaunchTraced(const std::string& program, const std::vector<std::string>& argv,
                              const BpfProgram& filter);

}  // namespace rxp::harness
