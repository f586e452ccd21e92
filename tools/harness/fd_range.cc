#include "tools/harness/fd_range.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

namespace rxp::harness {

Result<FdRange> FdRange::Make(uint32_t base, uint32_t size) {
  if (size < 16 || !std::has_single_bit(size))
    return Fail(EINVAL, "reserved fd range size {} is not a power of two >= 16", size);
  if (base == 0 || base % size != 0)
    return Fail(EINVAL, "reserved fd range base {} is not a non-zero multiple of its size {}",
                base, size);
  if (base > UINT32_MAX - size)
    return Fail(EINVAL, "reserved fd range [{}, +{}) overflows", base, size);
  return FdRange(base, size);
}

Result<FdRange> FdRange::ForSoftLimit(rlim_t soft_limit) {
  const uint64_t top = soft_limit == RLIM_INFINITY ? kMaxTop
                                                   : std::min<uint64_t>(soft_limit, kMaxTop);
  for (uint32_t size = kDefaultSize; size >= 64; size /= 2) {
    const uint64_t base = (top / size) * size - size;  // highest aligned block below top
    // Keep at least one block of ordinary fds below the reserved one.
    if (top >= size * 2 && base >= size) return Make(static_cast<uint32_t>(base), size);
  }
  return Fail(EMFILE,
              "RLIMIT_NOFILE soft limit {} is too low for a reserved fd range (need >= 128)",
              soft_limit);
}

Result<FdRange> FdRange::ForLimits(rlim_t soft, rlim_t hard) {
  const rlim_t reachable = hard == RLIM_INFINITY ? kMaxTop : std::min<rlim_t>(hard, kMaxTop);
  auto range = ForSoftLimit(std::max(soft, reachable));
  if (!range.ok())
    return Fail(EMFILE,
                "RLIMIT_NOFILE limits {} (soft) and {} (hard) are too low for a reserved fd range "
                "(need a hard limit >= 128)",
                soft, hard);
  return range;
}

Result<FdRange> FdRange::ForThisProcess() {
  struct rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return Fail(errno, "getrlimit(RLIMIT_NOFILE): {}", std::strerror(errno));
  return ForLimits(limit.rlim_cur, limit.rlim_max);
}

std::string FdRange::ToString() const { return fmt::format("[{}, {})", base_, end()); }

}  // namespace rxp::harness
