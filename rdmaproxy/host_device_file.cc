#include "rdmaproxy/host_device_file.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>

namespace rxp::proxy {

Result<HostDeviceFile> HostDeviceFile::Open(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Fail(errno, "cannot open {}: {}", path, std::strerror(errno));
  return HostDeviceFile(UniqueFd(fd));
}

Result<long> HostDeviceFile::Ioctl(unsigned long request, void* arg) {
  const int r = ::ioctl(fd_.get(), request, arg);
  // The kernel's errno is the app's answer; the reason stays short enough not to allocate
  // (kernel failures are the app's business, not a proxy decision).
  if (r < 0) return Error{errno, "host ioctl"};
  return static_cast<long>(r);
}

Result<long> HostDeviceFile::Write(const void* buffer, size_t length) {
  const ssize_t r = ::write(fd_.get(), buffer, length);
  if (r < 0) return Error{errno, "host write"};
  return static_cast<long>(r);
}

}  // namespace rxp::proxy
