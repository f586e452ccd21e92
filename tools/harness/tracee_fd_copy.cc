#include "tools/harness/tracee_fd_copy.h"

#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rxp::harness {

Result<UniqueFd> CopyTraceeFd(pid_t tgid, int fd) {
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, tgid, 0)));
  if (!pidfd.valid()) return Fail(errno, "pidfd_open({}): {}", tgid, std::strerror(errno));
  UniqueFd copy(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!copy.valid()) return Fail(errno, "pidfd_getfd({}, {}): {}", tgid, fd, std::strerror(errno));
  // The calling thread is stopped, and a change of a proxied fd by another thread stops
  // (it is in the reserved range) and waits for this one; still, make sure.
  if (syscall(SYS_kcmp, getpid(), tgid, KCMP_FILE, copy.get(), fd) != 0)
    return Fail(ESTALE, "fd {} of process {} is no longer the file", fd, tgid);
  return copy;
}

}  // namespace rxp::harness
