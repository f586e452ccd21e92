// The program's RLIMIT_NOFILE against the reserved fd range (fd_range.h).
//
// Proxied fds live in [base, end) below the hard limit the program started with
// (FdRange::ForLimits). Its soft limit may be lower from the start (`ulimit -Sn 64`), or the
// program may lower its limits afterwards -- `ulimit -n 256` in a job script, setrlimit in the program --
// and then the kernel refuses to allocate an fd at or above it: fcntl(F_DUPFD, base) is EINVAL
// (f_dupfd: from >= rlimit(RLIMIT_NOFILE)), and neither dup2 nor anything else can place one
// there. Natively the program's devices would open regardless. So:
//  - a soft limit below the range is honoured as set, and the tracer raises it for the moment it
//    moves a new proxied fd into the range (NofileRaise), then puts it back: the program's own
//    fds still get EMFILE where they would natively;
//  - the hard limit, which an unprivileged process can never raise again, is kept at the range's
//    end when the program asks for less (HardLimitKeepingRange); the tracer shows the program
//    the value it set, and refuses a raise above it as the kernel would (tracer_limits.cc).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <optional>

#include "abi/result.h"
#include "tools/harness/fd_range.h"

namespace rxp::harness {

// The limit to install instead of `requested` (a set of RLIMIT_NOFILE), or nullopt to let it
// through as asked: a hard limit at or above the range's end, or a request the kernel refuses
// anyway (soft above hard: EINVAL).
std::optional<rlimit> HardLimitKeepingRange(const rlimit& requested, const FdRange& range);

// While alive, process `tgid`'s RLIMIT_NOFILE soft limit is at least `at_least` (set with
// prlimit(2) from the tracer, which runs as the program's user); the destructor restores the
// limit it found. Nothing changes when the soft limit is already high enough, nor when it is
// at or below `asked` -- the lowest fd number the program's own call asked for, which the
// kernel refuses natively then (EINVAL), so the harness must not make it succeed.
class NofileRaise {
 public:
  // EMFILE with a reason when the hard limit is below `at_least` (lowered by someone outside
  // the sandbox: the range cannot be reached again); the errno of prlimit otherwise.
  static Result<NofileRaise> To(pid_t tgid, rlim_t at_least, rlim_t asked = 0);
  NofileRaise(NofileRaise&& other) noexcept : tgid_(other.tgid_), saved_(other.saved_) {
    other.saved_.reset();
  }
  NofileRaise& operator=(NofileRaise&&) = delete;
  ~NofileRaise();
  bool raised() const { return saved_.has_value(); }

 private:
  NofileRaise(pid_t tgid, std::optional<rlimit> saved) : tgid_(tgid), saved_(saved) {}
  pid_t tgid_;
  std::optional<rlimit> saved_;  // the limit to put back
};

}  // namespace rxp::harness
