// AddressSpace: the harness's state for one tracee mm (shared by its threads and by a vfork
// child until it execs).
//
// It owns the scratch region: a private anonymous mapping the harness injects into the tracee
// (mmap, PROT_READ) the first time a rewritten argument needs memory there — a redirected path,
// or a buffer an engine wants to hand the kernel. The tracee cannot write it (another thread
// cannot swap a path after the harness chose it): the region is sealed where the kernel has
// mseal (Linux 6.10), and the tracee cannot open /proc/<pid>/mem for writing (tracer_path.cc);
// the harness writes it through its own /proc/<pid>/mem, which uses FOLL_FORCE. Each thread that is inside a rewritten syscall holds
// one slot until that syscall's exit. A fork child inherits a copy of the mapping at the same
// address; exec drops it with the mm.
//
// It also holds the /proc/<pid>/mem fd for forced writes (bound to this mm; closed with it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "abi/result.h"
#include "abi/unique_fd.h"

namespace rxp::harness {

inline constexpr size_t kScratchSlotSize = 16 * 1024;  // a path (PATH_MAX) with room to spare
inline constexpr size_t kScratchSlots = 64;            // threads inside rewritten syscalls

class AddressSpace {
 public:
  AddressSpace() = default;
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  // The state of a fork child's copy: same scratch address, no slot in use, no mem fd yet.
  std::shared_ptr<AddressSpace> ForkCopy() const;

  bool has_scratch() const { return scratch_base_.has_value(); }
  std::optional<uint64_t> scratch_base() const { return scratch_base_; }
  // Records the region the harness mapped into the tracee (kScratchSlots * kScratchSlotSize).
  void SetScratch(uint64_t base) { scratch_base_ = base; }
  // Forgets the region (the tracee unmapped it, or it could not be written).
  void DropScratch();
  // The harness could not map a region (mmap failed in the tracee): do not try again; path
  // rewrites in this address space then fail with an errno and a logged reason.
  void MarkScratchUnavailable() { scratch_unavailable_ = true; }
  bool scratch_unavailable() const { return scratch_unavailable_; }

  // The slot of thread `tid` (allocating one on first use); EAGAIN when all are taken.
  Result<uint64_t> AcquireSlot(pid_t tid);
  void ReleaseSlot(pid_t tid);
  bool HoldsSlot(pid_t tid) const { return slots_.count(tid) != 0; }
  size_t slots_in_use() const { return slots_.size(); }

  UniqueFd& mem_fd() { return mem_fd_; }

  // The region: kScratchSlots read-only slots, then as many writable ones (KernelSlotOf).
  static constexpr size_t half_size() { return kScratchSlotSize * kScratchSlots; }
  static constexpr size_t region_size() { return 2 * half_size(); }
  // The writable twin of a thread's slot: for buffers the kernel writes back into (an ioctl's
  // attribute array), which therefore cannot be read-only to the tracee.
  static uint64_t KernelSlotOf(uint64_t slot) { return slot + half_size(); }

 private:
  std::optional<uint64_t> scratch_base_;
  bool scratch_unavailable_ = false;
  std::map<pid_t, size_t> slots_;  // tid -> slot index
  UniqueFd mem_fd_;
};

}  // namespace rxp::harness
