// HostDeviceFile: sentry mode's HostDevice -- the library opened the host device file itself
// and issues the ioctl / write on it (the ptrace harness has no HostDevice: its tracee issues
// them). Being the opener matters: ib_uverbs_write refuses write() from any other process
// (ib_safe_file_access), so only the opener may use the legacy write ABI directly.
#pragma once

#include <string>

#include "abi/result.h"
#include "rdmaproxy/embedder.h"
#include "abi/unique_fd.h"

namespace rxp::proxy {

class HostDeviceFile final : public HostDevice {
 public:
  // open(2) of `path` with `flags` (O_CLOEXEC is always added); the errno of open otherwise.
  static Result<HostDeviceFile> Open(const std::string& path, int flags);
  // Takes ownership of an fd the host kernel created (an async event fd, a completion channel).
  explicit HostDeviceFile(UniqueFd fd) : fd_(std::move(fd)) {}

  Result<long> Ioctl(unsigned long request, void* arg) override;
  Result<long> Write(const void* buffer, size_t length) override;
  int fd() const override { return fd_.get(); }

 private:
  UniqueFd fd_;
};

}  // namespace rxp::proxy
