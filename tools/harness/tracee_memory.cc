#include "tools/harness/tracee_memory.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace rxp::harness {
namespace {

constexpr uint64_t kPage = 4096;

// Splits [addr, addr + len) at page boundaries: one remote iovec per page.
std::vector<iovec> PageIovecs(uint64_t addr, size_t len) {
  std::vector<iovec> iov;
  while (len > 0) {
    const size_t chunk = std::min<size_t>(len, kPage - (addr % kPage));
    iov.push_back({reinterpret_cast<void*>(addr), chunk});
    addr += chunk;
    len -= chunk;
  }
  return iov;
}

}  // namespace

Result<void> TraceeMemory::Read(uint64_t addr, std::span<std::byte> buf) {
  auto got = ReadSome(addr, buf);
  if (!got.ok()) return std::move(got).error();
  if (*got != buf.size())
    return Fail(EFAULT, "tracee memory {:#x}+{} is unmapped after {} bytes", addr, buf.size(),
                *got);
  return Ok();
}

Result<std::string> TraceeMemory::ReadCString(uint64_t addr, size_t max_len) {
  std::string out;
  // Read to the end of the current page first: most strings are short, so one call suffices.
  size_t want = std::min<size_t>(max_len + 1, kPage - (addr % kPage));
  while (true) {
    const size_t old = out.size();
    out.resize(old + want);
    auto got = ReadSome(addr + old, std::as_writable_bytes(std::span(out).subspan(old)));
    if (!got.ok()) return std::move(got).error();
    out.resize(old + *got);
    if (auto nul = out.find('\0', old); nul != std::string::npos) {
      out.resize(nul);
      return out;
    }
    if (*got < want)
      return Fail(EFAULT, "string at {:#x} runs into unmapped memory", addr);
    if (out.size() > max_len)
      return Fail(ENAMETOOLONG, "string at {:#x} is longer than {} bytes", addr, max_len);
    want = std::min<size_t>(max_len + 1 - out.size(), kPage);
  }
}

Result<size_t> ProcessMemory::ReadSome(uint64_t addr, std::span<std::byte> buf) {
  size_t done = 0;
  while (done < buf.size()) {
    auto remote = PageIovecs(addr + done, std::min<size_t>(buf.size() - done, IOV_MAX * kPage));
    iovec local{buf.data() + done, 0};
    for (const iovec& r : remote) local.iov_len += r.iov_len;
    ssize_t n = process_vm_readv(pid_, &local, 1, remote.data(), remote.size(), 0);
    if (n < 0) {
      if (done > 0 && errno == EFAULT) break;
      return Fail(errno, "process_vm_readv(pid {}, {:#x}+{}): {}", pid_, addr + done,
                  local.iov_len, std::strerror(errno));
    }
    done += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < local.iov_len) break;  // stopped at an unmapped page
  }
  return done;
}

Result<void> ProcessMemory::Write(uint64_t addr, std::span<const std::byte> buf) {
  size_t done = 0;
  while (done < buf.size()) {
    auto remote = PageIovecs(addr + done, std::min<size_t>(buf.size() - done, IOV_MAX * kPage));
    iovec local{const_cast<std::byte*>(buf.data()) + done, 0};
    for (const iovec& r : remote) local.iov_len += r.iov_len;
    const ssize_t n = process_vm_writev(pid_, &local, 1, remote.data(), remote.size(), 0);
    if (n < 0)
      return Fail(errno, "process_vm_writev(pid {}, {:#x}+{}): {}", pid_, addr + done,
                  local.iov_len, std::strerror(errno));
    // A short write stopped at a page it cannot write: unmapped or read-only.
    if (static_cast<size_t>(n) < local.iov_len)
      return Fail(EFAULT, "process_vm_writev(pid {}, {:#x}+{}): the page at {:#x} is not "
                  "writable", pid_, addr + done, local.iov_len,
                  addr + done + static_cast<size_t>(n));
    done += static_cast<size_t>(n);
  }
  return Ok();
}

Result<int> ProcessMemory::MemFd() {
  if (!mem_fd_->valid()) {
    const std::string path = "/proc/" + std::to_string(pid_) + "/mem";
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return Fail(errno, "open {}: {}", path, std::strerror(errno));
    mem_fd_->reset(fd);
  }
  return mem_fd_->get();
}

Result<void> ProcessMemory::WriteForced(uint64_t addr, std::span<const std::byte> buf) {
  auto fd = MemFd();
  if (!fd.ok()) return std::move(fd).error();
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t n = pwrite(*fd, buf.data() + done, buf.size() - done,
                       static_cast<off_t>(addr + done));
    if (n <= 0) {
      // /proc/<pid>/mem reports unmapped memory as EIO (mem_rw); callers expect EFAULT.
      const int err = n < 0 && errno != EIO ? errno : EFAULT;
      return Fail(err, "write /proc/{}/mem at {:#x}+{}: {}", pid_, addr + done,
                  buf.size() - done, std::strerror(n < 0 ? errno : EFAULT));
    }
    done += static_cast<size_t>(n);
  }
  return Ok();
}

}  // namespace rxp::harness
