#include "rdmaproxy/sandbox_usage.h"

#include <cerrno>

namespace rxp::proxy {
namespace {

std::string Bytes(uint64_t n) {
  if (n >= (1ull << 30) && n % (1ull << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n >= (1ull << 20) && n % (1ull << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n >= (1ull << 10) && n % (1ull << 10) == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} bytes", n);
}

}  // namespace

Result<void> SandboxUsage::Reserve(abi::ObjectId type, uint64_t pinned) {
  std::lock_guard lock(mutex_);
  const auto limit = quotas_.CountLimit(type);
  uint32_t& count = Live(type);
  if (limit && count >= *limit)
    return Fail(EDQUOT, "the sandbox's {} quota (\"{}\": {}) is used up",
                abi::ObjectShortName(type), Quotas::CountKeyOf(type), *limit);
  RXP_TRY(FitsPinned(pinned));
  ++count;
  AddPinned(pinned);
  return Ok();
}

// The kernel answers an exhausted RLIMIT_MEMLOCK with ENOMEM (ib_umem_get); so does the
// sandbox's own budget, with the numbers in the reason. Compared without a sum that can wrap:
// an implicit ODP REG_MR asks for 2^64-1 bytes. Called under mutex_.
Result<void> SandboxUsage::FitsPinned(uint64_t pinned) const {
  if (pinned != 0 && quotas_.pinned_bytes &&
      (pinned > *quotas_.pinned_bytes || pinned_ > *quotas_.pinned_bytes - pinned))
    return Fail(ENOMEM,
                "the sandbox's pinned-memory budget of {} is exceeded: {} in use, {} more asked",
                Bytes(*quotas_.pinned_bytes), Bytes(pinned_), Bytes(pinned));
  return Ok();
}

// Saturating, for the same reason: without a budget nothing refuses such an MR.
void SandboxUsage::AddPinned(uint64_t pinned) {
  pinned_ = pinned > UINT64_MAX - pinned_ ? UINT64_MAX : pinned_ + pinned;
}

void SandboxUsage::Release(abi::ObjectId type, uint64_t pinned) {
  std::lock_guard lock(mutex_);
  if (uint32_t& count = Live(type); count > 0) --count;
  pinned_ -= pinned <= pinned_ ? pinned : pinned_;
}

Result<void> SandboxUsage::ReservePinned(uint64_t pinned) {
  std::lock_guard lock(mutex_);
  RXP_TRY(FitsPinned(pinned));
  AddPinned(pinned);
  return Ok();
}

void SandboxUsage::ReleasePinned(uint64_t pinned) {
  std::lock_guard lock(mutex_);
  pinned_ -= pinned <= pinned_ ? pinned : pinned_;
}

uint64_t SandboxUsage::pinned_bytes() const {
  std::lock_guard lock(mutex_);
  return pinned_;
}

uint32_t SandboxUsage::live(abi::ObjectId type) const {
  std::lock_guard lock(mutex_);
  if (type < core_live_.size()) return core_live_[type];
  auto it = other_live_.find(type);
  return it == other_live_.end() ? 0 : it->second;
}

}  // namespace rxp::proxy
