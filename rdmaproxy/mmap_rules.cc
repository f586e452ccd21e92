#include "rdmaproxy/mmap_rules.h"

#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>

namespace rxp::proxy {
namespace {

// enum mlx5_ib_mmap_cmd (drivers/infiniband/hw/mlx5/mlx5_ib.h).
enum Mlx5MmapCmd : uint32_t {
  kRegularPage = 0,        // static UAR page
  kGetContiguous = 1,      // upstream: -ENOSYS
  kWcPage = 2,
  kNcPage = 3,
  kCoreClock = 5,          // read-only timer page
  kAllocWc = 6,            // legacy dynamic UAR
  kClockInfo = 7,          // read-only clock info page
  kDeviceMem = 8,          // MEMIC pages of a DM allocation
  kFirstEntry = 9,         // rdma_user_mmap_entry range: offsets handed out by the kernel
};

}  // namespace

unsigned MmapRules::HostPageShift() {
  static const unsigned shift = static_cast<unsigned>(
      std::countr_zero(static_cast<unsigned long>(::sysconf(_SC_PAGESIZE))));
  return shift;
}

Result<void> MmapRules::Check(uint64_t offset, uint64_t length, int prot) {
  RXP_TRY(CheckOffset(offset, length, prot));
  checked_.insert(offset);
  return Ok();
}

Result<void> MmapRules::Mapped(uint64_t offset) {
  if (checked_.erase(offset) == 0)
    return Fail(EINVAL, "mmap offset {:#x} was not checked (or was committed already)", offset);
  once_.erase(offset);
  return Ok();
}

Result<void> MmapRules::CheckOffset(uint64_t offset, uint64_t length, int prot) const {
  if (length == 0) return Fail(EINVAL, "mmap of length 0");  // do_mmap(), as mmap(2) says
  if ((offset & ((1ull << page_shift_) - 1)) != 0)
    return Fail(EINVAL, "mmap offset {:#x} is not page aligned", offset);
  switch (driver_) {
    case abi::Driver::kMlx5: return CheckMlx5(offset, length, prot);
    case abi::Driver::kRxe: return CheckRxe(offset, length);
    case abi::Driver::kCore: return Ok();  // an unmodelled driver: the kernel's checks alone
  }
  return Ok();
}

// mlx5_ib_mmap() (hw/mlx5/main.c).
Result<void> MmapRules::CheckMlx5(uint64_t offset, uint64_t length, int prot) const {
  const uint64_t pgoff = offset >> page_shift_;
  const auto cmd = static_cast<uint32_t>((pgoff >> 8) & 0xff);
  switch (cmd) {
    case kRegularPage:
    case kWcPage:
    case kNcPage:
    case kAllocWc:
    case kDeviceMem:
      return Ok();
    case kCoreClock:
    case kClockInfo:
      if ((prot & PROT_WRITE) != 0)
        return Fail(EPERM, "mlx5 clock page (mmap command {}) is read-only", cmd);
      return Ok();
    case kGetContiguous:
      return Fail(ENOSYS, "mlx5 contiguous-pages mmap is not implemented by the kernel");
    default:
      break;
  }
  if (cmd < kFirstEntry) return Fail(EINVAL, "unknown mlx5 mmap command {}", cmd);
  auto it = entries_.find(offset);
  if (it == entries_.end())
    return Fail(EINVAL, "mlx5 mmap offset {:#x} was not handed out by a live UAR or VAR "
                "allocation", offset);
  if (length > it->second)
    return Fail(EINVAL, "mlx5 mmap of {} bytes exceeds the {}-byte object", length, it->second);
  return Ok();
}

// rxe_mmap() (sw/rxe/rxe_mmap.c): the offset must be a pending cookie of this context.
Result<void> MmapRules::CheckRxe(uint64_t offset, uint64_t length) const {
  auto it = once_.find(offset);
  if (it == once_.end())
    return Fail(EINVAL, "rxe mmap offset {:#x} is not a queue of this file (or already mapped)",
                offset);
  if (length > it->second)
    return Fail(EINVAL, "rxe mmap of {} bytes exceeds the {}-byte queue", length, it->second);
  return Ok();
}

}  // namespace rxp::proxy
