// UniqueFd: the one owner of a file descriptor; closes it when destroyed.
//
// Every fd the harness opens (pipes to the child, /proc/<pid>/mem, trace files, directory fds)
// lives in one of these, so that no path — error, early return, exception at the CLI edge —
// leaves a descriptor behind. The harness must never keep a tracee's device fd alive (that
// would pin host RDMA objects after the tracee dies), and a leak check compares /proc/self/fd
// before and after a run.
#pragma once

#include <unistd.h>

#include <utility>

namespace rxp::harness {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing.
  int release() { return std::exchange(fd_, -1); }

  // Closes the current fd (if any) and owns `fd` instead. close() errors are ignored: on Linux
  // the descriptor is gone even when close() reports EINTR or EIO (close(2), "Dealing with
  // error returns").
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace rxp::harness
