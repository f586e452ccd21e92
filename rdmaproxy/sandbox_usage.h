// What the whole sandbox holds right now, against its quotas: live objects per type and pinned
// bytes. Shared by every open file of the sandbox (a process may open many uverbs files; fork
// shares them). Reservations are taken before a command is forwarded and settled after it, so
// two concurrent creations cannot both squeeze under a limit.
#pragma once

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
  Quotas quotas_;
  mutable std::mutex mutex_;
  uint64_t pinned_ = 0;
  std::map<abi::ObjectId, uint32_t> live_;
};

}  // namespace rxp::proxy
