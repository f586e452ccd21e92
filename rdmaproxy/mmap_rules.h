// Which mmap() offsets an app may map on a uverbs file, per driver, and the bookkeeping that
// needs: mlx5 offsets encode a command (mlx5_ib_mmap: pgoff >> 8 & 0xff) and, for dynamic
// objects, an entry the kernel handed out (UAR_OBJ_ALLOC's MMAP_OFFSET); rxe offsets are
// cookies from create responses, each mappable once (rxe_mmap removes it from pending_mmaps).
// The mapping itself is made on the host fd straight into the app, so the data path (doorbells,
// queue rings) never traps.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::proxy {

class MmapRules {
 public:
  // `page_shift`: the host kernel's PAGE_SHIFT, the unit of mmap offsets (vma->vm_pgoff) --
  // 12 on x86-64, 16 on an arm64 kernel with 64 KiB pages.
  explicit MmapRules(abi::Driver driver, unsigned page_shift = HostPageShift())
      : driver_(driver), page_shift_(page_shift) {}
  static unsigned HostPageShift();

  // rxe: a queue's mmap cookie from a create / resize / modify response.
  void AllowOnce(uint64_t offset, uint64_t size) { once_[offset] = size; }
  // mlx5: an entry offset from UAR_OBJ_ALLOC or VAR_OBJ_ALLOC (mappable while the object
  // lives: the engine revokes it when the object is destroyed).
  void AllowEntry(uint64_t offset, uint64_t size) { entries_[offset] = size; }
  void RevokeEntry(uint64_t offset) { entries_.erase(offset); }

  // Whether mmap(length, prot, offset) may be forwarded; EINVAL / EPERM with a reason if not.
  // A passed check is remembered until Mapped: only a checked offset can be committed.
  Result<void> Check(uint64_t offset, uint64_t length, int prot);
  // A successful mapping of a checked offset: rxe cookies are spent. EINVAL for an offset
  // that no check passed (or that was committed already): a runtime's bookkeeping error that
  // would otherwise spend nothing, or spend a cookie no one checked.
  Result<void> Mapped(uint64_t offset);

 private:
  Result<void> CheckOffset(uint64_t offset, uint64_t length, int prot) const;
  Result<void> CheckMlx5(uint64_t offset, uint64_t length, int prot) const;
  Result<void> CheckRxe(uint64_t offset, uint64_t length) const;

  abi::Driver driver_;
  unsigned page_shift_;
  std::map<uint64_t, uint64_t> once_;     // rxe: offset -> size
  std::map<uint64_t, uint64_t> entries_;  // mlx5: offset -> size
  std::set<uint64_t> checked_;            // passed Check, not yet Mapped
};

}  // namespace rxp::proxy
