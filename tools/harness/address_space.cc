#include "tools/harness/address_space.h"

#include <cerrno>
#include <vector>

namespace rxp::harness {

std::shared_ptr<AddressSpace> AddressSpace::ForkCopy() const {
  auto copy = std::make_shared<AddressSpace>();
  copy->scratch_base_ = scratch_base_;
  copy->scratch_unavailable_ = scratch_unavailable_;
  return copy;
}

void AddressSpace::DropScratch() {
  scratch_base_.reset();
  slots_.clear();
}

Result<uint64_t> AddressSpace::AcquireSlot(pid_t tid) {
  if (!scratch_base_) return Fail(EFAULT, "no scratch region in this address space");
  if (auto it = slots_.find(tid); it != slots_.end())
    return *scratch_base_ + it->second * kScratchSlotSize;
  std::vector<bool> used(kScratchSlots);
  for (const auto& [owner, index] : slots_) used[index] = true;
  for (size_t i = 0; i < kScratchSlots; ++i) {
    if (!used[i]) {
      slots_[tid] = i;
      return *scratch_base_ + i * kScratchSlotSize;
    }
  }
  return Fail(EAGAIN, "all {} scratch slots are in use", kScratchSlots);
}

void AddressSpace::ReleaseSlot(pid_t tid) { slots_.erase(tid); }

}  // namespace rxp::harness
