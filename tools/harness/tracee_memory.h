// TraceeMemory: reading and writing a tracee's address space.
//
// This is the interface an engine wraps as its AppMemory: a handler that decodes an ioctl
// reads the command buffer through it and writes translated results back. The ptrace
// implementation (ProcessMemory) uses process_vm_readv/writev with one remote iovec per page,
// because the kernel never splits a single iovec: one that crosses into an unmapped page fails
// whole (process_vm_readv(2), "Partial transfers"; sandbox2's ProcessVmReadInSplitChunks).
// Write() is the kernel's copy_to_user() on the program's behalf: a read-only page fails it
// (EFAULT), as it fails a native receive, readlink or ioctl output into such a page.
// WriteForced() is for the harness's own read-only scratch region: it goes through
// /proc/<pid>/mem, which writes with FOLL_FORCE (proc(5)).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "abi/result.h"
#include "abi/unique_fd.h"

namespace rxp::harness {

class TraceeMemory {
 public:
  virtual ~TraceeMemory() = default;

  // Reads up to buf.size() bytes at addr, stopping early only at an unmapped page; returns
  // the number read (0 with an EFAULT error when not even the first byte is readable).
  virtual Result<size_t> ReadSome(uint64_t addr, std::span<std::byte> buf) = 0;

  // Writes all of buf at addr, or fails (EFAULT: unmapped or read-only) without a
  // partial-write guarantee.
  virtual Result<void> Write(uint64_t addr, std::span<const std::byte> buf) = 0;

  // The same, read-only mappings included: only for the harness's scratch region, which the
  // program cannot write. Stand-ins without protections write as Write does.
  virtual Result<void> WriteForced(uint64_t addr, std::span<const std::byte> buf) {
    return Write(addr, buf);
  }

  // Reads exactly buf.size() bytes; EFAULT when any of it is unmapped.
  Result<void> Read(uint64_t addr, std::span<std::byte> buf);

  // Reads a NUL-terminated string of at most max_len bytes (not counting the NUL):
  // EFAULT when unreadable, ENAMETOOLONG when no NUL comes within max_len + 1 bytes.
  Result<std::string> ReadCString(uint64_t addr, size_t max_len);

  // Typed helpers for plain structs.
  template <typename T>
  Result<T> ReadValue(uint64_t addr) {
    T value{};
    RXP_TRY(Read(addr, std::as_writable_bytes(std::span<T, 1>(&value, 1))));
    return value;
  }
  template <typename T>
  Result<void> WriteValue(uint64_t addr, const T& value) {
    return Write(addr, std::as_bytes(std::span<const T, 1>(&value, 1)));
  }
};

// A live tracee's memory. `pid` may be any thread of the address space. The /proc/<pid>/mem
// fd used for forced writes is opened on first use and held by `mem_fd` (owned by the caller,
// usually the address-space state, so that it is opened once per address space and closed
// when the address space goes away: an fd on /proc/<pid>/mem stays bound to the mm it was
// opened on, so it must be dropped at exec).
class ProcessMemory final : public TraceeMemory {
 public:
  ProcessMemory(pid_t pid, UniqueFd* mem_fd) : pid_(pid), mem_fd_(mem_fd) {}

  Result<size_t> ReadSome(uint64_t addr, std::span<std::byte> buf) override;
  Result<void> Write(uint64_t addr, std::span<const std::byte> buf) override;
  // Through /proc/<pid>/mem alone: the scratch region's pages are read-only, where
  // process_vm_writev would fail first.
  Result<void> WriteForced(uint64_t addr, std::span<const std::byte> buf) override;

 private:
  Result<int> MemFd();
  pid_t pid_;
  UniqueFd* mem_fd_;
};

}  // namespace rxp::harness
