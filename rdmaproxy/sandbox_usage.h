// What the whole sandbox holds right now, against its quotas: live objects per type and pinned
// bytes. Shared by every open file of the sandbox (a process may open many uverbs files; fork
// shares them). Reservations are taken before a command is forwarded and settled after it, so
// two concurrent creations cannot both squeeze under a limit.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>

#include "abi/result.h"
#include "abi/schema.h"
#include "rdmaproxy/policy.h"

namespace rxp::proxy {

class SandboxUsage {
 public:
  explicit SandboxUsage(Quotas quotas) : quotas_(std::move(quotas)) {}

  // Reserves one object of `type` and `pinned` bytes; ENOMEM / EDQUOT-style errors name the
  // limit. An object type without a limit still counts (for reports).
  Result<void> Reserve(abi::ObjectId type, uint64_t pinned);
  // Gives back what Reserve took (the command failed, or the object was destroyed).
  void Release(abi::ObjectId type, uint64_t pinned);
  // Changes pinned bytes of an existing object (REREG_MR with a new range).
  Result<void> ReservePinned(uint64_t pinned);
  void ReleasePinned(uint64_t pinned);

  uint64_t pinned_bytes() const;
  uint32_t live(abi::ObjectId type) const;
  const Quotas& quotas() const { return quotas_; }

 private:
  // The live count of `type` (created on first use); callers hold mutex_.
  uint32_t& Live(abi::ObjectId type) {
    return type < core_live_.size() ? core_live_[type] : other_live_[type];
  }
  Result<void> FitsPinned(uint64_t pinned) const;  // callers hold mutex_
  void AddPinned(uint64_t pinned);                  // callers hold mutex_

  Quotas quotas_;
  mutable std::mutex mutex_;
  uint64_t pinned_ = 0;
  // Core object types (UVERBS_OBJECT_*, small ids) are counted in place, at every creation
  // and destruction; driver types (MLX5_IB_OBJECT_*, 0x1000 up) in a map.
  std::array<uint32_t, 32> core_live_{};
  std::map<abi::ObjectId, uint32_t> other_live_;
};

}  // namespace rxp::proxy
