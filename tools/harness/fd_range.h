// FdRange: the reserved block of fd numbers where proxied device fds live.
//
// The harness moves every proxied fd (a uverbs device, the rdma_cm device, anything an engine
// adopts) into this block, so that a static seccomp filter can stop exactly the syscalls that
// name a proxied fd and let every other read/write/ioctl/mmap run at native speed.
//
// The block is aligned to its (power-of-two) size, so one BPF masked comparison matches it:
// (fd & ~(size - 1)) == base. The comparison looks only at the low 32 bits, which is what the
// kernel itself uses: every fd argument is an `unsigned int` in the syscall definitions
// (SYSCALL_DEFINE3(ioctl, unsigned int, fd, ...), ksys_mmap_pgoff's fget(fd)), so a caller
// that sets the high bits of the register must not slip past the filter.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>

#include "abi/result.h"

namespace rxp::harness {

class FdRange {
 public:
  // The default block size; the top of the block is the fd soft limit capped at 1024 (the
  // select() FD_SETSIZE), so proxied fds stay usable with select() and under the limit.
  static constexpr uint32_t kDefaultSize = 256;
  static constexpr uint32_t kMaxTop = 1024;

  // [base, base + size): size a power of two >= 16, base a non-zero multiple of size.
  static Result<FdRange> Make(uint32_t base, uint32_t size);

  // The default block for an RLIMIT_NOFILE soft limit: the highest aligned block of
  // kDefaultSize (or smaller, down to 64, for small limits) that ends at or below
  // min(soft, kMaxTop). [768, 1024) for the usual soft limit of 1024.
  static Result<FdRange> ForSoftLimit(rlim_t soft_limit);

  // The block for a program that starts with these RLIMIT_NOFILE limits: ForSoftLimit of the
  // larger of `soft` and min(`hard`, kMaxTop). A block above the soft limit is reachable: the
  // tracer raises the program's soft limit for the moment it moves an fd into the block
  // (nofile_limit.h), so a low soft limit (`ulimit -Sn 64`) needs no smaller block.
  static Result<FdRange> ForLimits(rlim_t soft, rlim_t hard);

  // ForLimits(getrlimit(RLIMIT_NOFILE)) of the calling process, which the program inherits.
  static Result<FdRange> ForThisProcess();

  uint32_t base() const { return base_; }
  uint32_t size() const { return size_; }
  uint32_t end() const { return base_ + size_; }
  // The BPF mask: (low32(arg) & mask()) == base() <=> the fd is in the block.
  uint32_t mask() const { return ~(size_ - 1); }

  // True when the low 32 bits of a raw syscall argument name an fd in the block.
  bool Contains(uint64_t raw_arg) const {
    return (static_cast<uint32_t>(raw_arg) & mask()) == base_;
  }

  // The block's upper half holds the files whose reads, writes, ioctls and mmaps the harness
  // must see (uverbs and rdma_cm files, NETLINK_RDMA sockets, an ordered class directory): the
  // device filter stops those calls there only. The lower, quiet half holds the event files
  // (async event fds, completion channels), whose reads return the kernel's event descriptors
  // untouched and which have no write, ioctl or mmap, so a program waiting for completions by
  // event pays no stop per event; their dup, close and SCM_RIGHTS still stop, as the whole
  // block's do. The stopping half is the upper one so that a copy made with
  // F_DUPFD(fd, its base) -- the lowest free number at or above it -- can never land in the
  // quiet half, not even for a moment. It is aligned to its size: one masked comparison.
  FdRange StoppingHalf() const { return FdRange(base_ + size_ / 2, size_ / 2); }

  std::string ToString() const;  // "[768, 1024)"

 private:
  FdRange(uint32_t base, uint32_t size) : base_(base), size_(size) {}
  uint32_t base_;
  uint32_t size_;
};

}  // namespace rxp::harness
