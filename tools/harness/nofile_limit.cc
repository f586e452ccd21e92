#include "tools/harness/nofile_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace rxp::harness {

std::optional<rlimit> HardLimitKeepingRange(const rlimit& requested, const FdRange& range) {
  if (requested.rlim_cur > requested.rlim_max) return std::nullopt;  // do_prlimit: EINVAL
  if (requested.rlim_max >= range.end()) return std::nullopt;
  rlimit kept = requested;
  kept.rlim_max = range.end();
  return kept;
}

Result<NofileRaise> NofileRaise::To(pid_t tgid, rlim_t at_least, rlim_t asked) {
  rlimit now{};
  if (prlimit(tgid, RLIMIT_NOFILE, nullptr, &now) != 0)
    return Fail(errno, "reading process {}'s RLIMIT_NOFILE: {}", tgid, std::strerror(errno));
  if (now.rlim_cur >= at_least || now.rlim_cur <= asked) return NofileRaise(tgid, std::nullopt);
  if (now.rlim_max < at_least)
    return Fail(EMFILE,
                "process {}'s RLIMIT_NOFILE hard limit ({}) is below the reserved fd range's end "
                "({}): no proxied fd can be placed",
                tgid, now.rlim_max, at_least);
  const rlimit raised{at_least, now.rlim_max};
  if (prlimit(tgid, RLIMIT_NOFILE, &raised, nullptr) != 0)
    return Fail(errno, "raising process {}'s RLIMIT_NOFILE to {}: {}", tgid, at_least,
                std::strerror(errno));
  return NofileRaise(tgid, now);
}

NofileRaise::~NofileRaise() {
  // Fails only when the process is gone, which leaves nothing to restore.
  if (saved_) (void)prlimit(tgid_, RLIMIT_NOFILE, &*saved_, nullptr);
}

}  // namespace rxp::harness
