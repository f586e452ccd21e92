// UniqueFd: the one owner of a file descriptor; closes it exactly once, when destroyed.
//
// Every fd the project opens -- the engine's host device files, the harness's pipes,
// /proc/<pid>/mem and trace files, the sysfs reader's and renderer's directory fds -- lives in
// one of these, so that no path (error, early return, exception at the CLI edge) leaves a
// descriptor behind. (A tool shared by every layer; it lives in abi/ because that is the
// bottom of the dependency order.)
#pragma once

#include <unistd.h>

#include <utility>

namespace rxp {

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

  // Gives up ownership without closing (e.g. to fdopendir, which closes it through closedir).
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

}  // namespace rxp
