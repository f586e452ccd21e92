// A descriptor of the tracer's own for an open file of a traced process.
#pragma once

#include <sys/types.h>

#include "abi/result.h"
#include "abi/unique_fd.h"

namespace rxp::harness {

// The tracer's descriptor of the same open file as process `tgid`'s `fd` (pidfd_getfd(2),
// Linux 5.6; allowed to the tracer, which ptrace-attached the process). Checked with kcmp(2)
// to be that file still. Errors: the syscalls' errno, ESTALE when `fd` changed meanwhile.
Result<UniqueFd> CopyTraceeFd(pid_t tgid, int fd);

}  // namespace rxp::harness
