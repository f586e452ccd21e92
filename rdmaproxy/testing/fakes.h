// Fakes of the embedder interfaces for engine unit tests (never used in place of the kernel in
// conformance tests: those run real rdma-core programs in the VM test bed).
#pragma once

#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "abi/uapi.h"
#include "rdmaproxy/embedder.h"

namespace rxp::proxy::testing {

// App memory as a set of regions at fake addresses. `mirror_offset` != 0 models a Sentry-style
// runtime: the host sees the same pages at address + mirror_offset.
class FakeAppMemory final : public AppMemory {
 public:
  explicit FakeAppMemory(uint64_t mirror_offset = 0) : mirror_offset_(mirror_offset) {}

  uint64_t Alloc(size_t size) {
    const uint64_t at = next_;
    next_ += (size + 0xfff) / 0x1000 * 0x1000 + 0x1000;
    regions_[at] = std::vector<std::byte>(size);
    return at;
  }
  template <typename T>
  uint64_t Put(const T& value) {
    const uint64_t at = Alloc(sizeof(T));
    std::memcpy(regions_[at].data(), &value, sizeof(T));
    return at;
  }
  // What another thread's munmap of the region at `at` (an Alloc result) does.
  void Unmap(uint64_t at) { regions_.erase(at); }
  // What an mprotect(PROT_READ) of the region at `at` does: reads work, writes fault.
  void Protect(uint64_t at) { read_only_.insert(at); }
  uint64_t PutBytes(const std::vector<std::byte>& bytes) {
    const uint64_t at = Alloc(bytes.size());
    std::memcpy(regions_[at].data(), bytes.data(), bytes.size());
    return at;
  }
  template <typename T>
  T Get(uint64_t at) const {
    T v{};
    std::span<std::byte> out(reinterpret_cast<std::byte*>(&v), sizeof(T));
    (void)const_cast<FakeAppMemory*>(this)->Read(at, out);
    return v;
  }

  bool IdentityMapped() const override { return mirror_offset_ == 0; }
  Result<void> Read(uint64_t address, std::span<std::byte> out) override {
    auto* r = Find(address, out.size());
    if (r == nullptr) return Fail(EFAULT, "unmapped {:#x}", address);
    if (!out.empty()) std::memcpy(out.data(), r, out.size());  // memcpy(nullptr, ..., 0) is UB
    return Ok();
  }
  Result<void> Write(uint64_t address, std::span<const std::byte> in) override {
    auto* r = Find(address, in.size());
    if (r == nullptr) return Fail(EFAULT, "unmapped {:#x}", address);
    if (read_only_.contains(Region(address))) return Fail(EFAULT, "read-only {:#x}", address);
    if (!in.empty()) std::memcpy(r, in.data(), in.size());
    return Ok();
  }
  Result<uint64_t> HostAddress(uint64_t address, uint64_t length) override {
    if (Find(address, length) == nullptr) return Fail(EFAULT, "unmapped {:#x}", address);
    return address + mirror_offset_;
  }

 private:
  uint64_t Region(uint64_t address) const {
    return std::prev(regions_.upper_bound(address))->first;
  }
  std::byte* Find(uint64_t address, size_t length) {
    auto it = regions_.upper_bound(address);
    if (it == regions_.begin()) return nullptr;
    --it;
    if (address + length > it->first + it->second.size()) return nullptr;
    return it->second.data() + (address - it->first);
  }

  uint64_t mirror_offset_;
  uint64_t next_ = 0x7f0000000000;
  std::map<uint64_t, std::vector<std::byte>> regions_;
  std::set<uint64_t> read_only_;
};

// The app's fd table: app fd -> host fd, kind, owner. Adopt assigns app fds from 100 up; with
// `adopt_errno` set it fails as a full fd table would, recording the fd it closed in `closed`.
class FakeFdBridge final : public FdBridge {
 public:
  int adopt_errno = 0;
  std::vector<int> closed;

  void Add(int app_fd, HostFile file) { fds_[app_fd] = file; }
  Result<HostFile> Resolve(int app_fd) override {
    auto it = fds_.find(app_fd);
    if (it == fds_.end()) return Fail(EBADF, "no fd {}", app_fd);
    return it->second;
  }
  Result<int> Adopt(int fd, FileKind kind, uint64_t owner) override {
    if (adopt_errno != 0) {
      closed.push_back(fd);
      return Fail(adopt_errno, "the app's fd table is full");
    }
    const int app = next_++;
    fds_[app] = {fd, kind, owner};
    return app;
  }
  const std::map<int, HostFile>& fds() const { return fds_; }

 private:
  std::map<int, HostFile> fds_;
  int next_ = 100;
};

// A host device whose "kernel" is a test callback over the forwarded bytes. The engine's
// questions of which methods the device implements (device_methods.h) are answered apart, by
// `on_probe` (default: the device implements everything), and counted in `probes`, not
// `calls`: `calls` counts what the engine forwarded.
class FakeHostDevice final : public HostDevice {
 public:
  std::function<long(void* arg)> on_ioctl = [](void*) { return 0L; };
  std::function<long(const void* buf, size_t len)> on_write = [](const void*, size_t len) {
    return static_cast<long>(len);
  };
  // Answers a probe: an ioctl with no attributes (the kernel: EINVAL, a mandatory attribute is
  // missing; or EPROTONOSUPPORT, no such method), or an INVOKE_WRITE with only WRITE_CMD
  // (ENOSPC, the request is short; or EOPNOTSUPP, no such command).
  std::function<long(const abi::IoctlHeader& header, uint64_t write_cmd)> on_probe =
      [](const abi::IoctlHeader& header, uint64_t) {
        return header.num_attrs == 0 ? -long{EINVAL} : -long{ENOSPC};
      };
  int calls = 0;
  int probes = 0;
  Result<long> Ioctl(unsigned long, void* arg) override {
    abi::IoctlHeader header;
    std::memcpy(&header, arg, sizeof(header));
    ib_uverbs_attr first{};
    if (header.num_attrs == 1)
      std::memcpy(&first, static_cast<std::byte*>(arg) + sizeof(header), sizeof(first));
    if (header.num_attrs == 0 ||
        (header.num_attrs == 1 && header.object_id == UVERBS_OBJECT_DEVICE &&
         header.method_id == UVERBS_METHOD_INVOKE_WRITE && first.attr_id == UVERBS_ATTR_WRITE_CMD)) {
      ++probes;
      const long r = on_probe(header, first.data);
      if (r < 0) return Fail(static_cast<int>(-r), "fake kernel (probe)");
      return r;
    }
    ++calls;
    const long r = on_ioctl(arg);
    if (r < 0) return Fail(static_cast<int>(-r), "fake kernel");
    return r;
  }
  Result<long> Write(const void* buf, size_t len) override {
    ++calls;
    const long r = on_write(buf, len);
    if (r < 0) return Fail(static_cast<int>(-r), "fake kernel");
    return r;
  }
  int poll_fd = -1;  // what fd() answers: a pipe stands for a file with (no) events queued
  int fd() const override { return poll_fd; }
};

}  // namespace rxp::proxy::testing
