// The objects one uverbs file owns, as the proxy saw them created: handle -> type and what it
// holds against the sandbox's quotas. Handles live in one namespace per file (the kernel's
// ufile->idr), so the table is per file. A handle the table does not know is refused before
// it reaches the kernel, with the kernel's own errno (ENOENT, lookup_get_idr_uobject), and a
// handle of the wrong type with EINVAL (rdma_lookup_get_uobject).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "abi/payload.h"
#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::proxy {

struct TrackedObject {
  abi::ObjectId type = abi::kNoObject;
  uint64_t pinned = 0;   // bytes counted against the pinned-memory budget
  // The MR's access flags hold IB_ACCESS_ON_DEMAND: a REREG_MR with a new range that keeps
  // its flags makes an ODP MR, which pins nothing. Not "pinned == 0": a dma-buf MR pins none
  // of the app's memory either, yet a rereg with a new range pins that range; and a pinned
  // MR given ON_DEMAND by an ACCESS-only rereg keeps its pinned range until then
  // (mlx5_ib_rereg_user_mr).
  bool on_demand = false;
  // A CQ whose buffer the driver pinned: its entries (mlx5: RESIZE_CQ to as many pins nothing).
  uint32_t queue_entries = 0;
  // An object that came with an mmap entry (mlx5 UAR, VAR): its offset, no longer mappable
  // once the object is gone (rdma_user_mmap_entry_remove). 0: none.
  uint64_t mmap_entry = 0;
  // A queue whose doorbell record the driver pinned: the record's page (UverbsFile counts the
  // page's holders). 0: none.
  uint64_t doorbell_page = 0;
  // Which object this is (ObjectTable::Insert numbers them): the kernel reuses a freed
  // handle at once, so a handle alone does not say whether the object a destroy named is
  // still the one the table holds under it.
  uint64_t serial = 0;
};

class ObjectTable {
 public:
  // The object `handle` as a `type` (kAnyObject accepts any type).
  Result<const TrackedObject*> Lookup(uint64_t handle, abi::ObjectId type) const;
  // Looks up every handle field of a legacy request (`request`: the bytes of `layout`) the way
  // its kernel handler reads it (abi::HandleUseOf: create_qp's pd_handle names an XRCD for an
  // XRC target QP, its srq_handle is read only with is_srq, ...), as ioctl IDR attributes are
  // looked up. The first failure is the error, with the handler's errno. `what` names the
  // command in the reason.
  Result<void> CheckHandles(const abi::Layout& layout, std::span<const std::byte> request,
                            std::string_view what) const;
  // The same over `handles` alone: HandleFields(layout), listed once by the caller.
  Result<void> CheckHandles(std::span<const abi::FieldAt> handles,
                            std::span<const std::byte> request, std::string_view what) const;
  // The fields of `layout` CheckHandles looks at, in its order.
  static std::vector<abi::FieldAt> HandleFields(const abi::Layout& layout) {
    return abi::FieldsOf(layout, [](abi::FieldKind k) { return k == abi::FieldKind::kHandle; });
  }
  // Returns the object the handle held before, if any (replaced). The new object gets the
  // next serial (from 1).
  std::optional<TrackedObject> Insert(uint32_t handle, TrackedObject object);
  // Removes `handle` and returns what it held (nullopt if unknown).
  std::optional<TrackedObject> Erase(uint32_t handle);
  TrackedObject* Find(uint32_t handle);
  const TrackedObject* Find(uint32_t handle) const;

  size_t size() const { return size_; }
  // Calls visit(handle, object) for every object in the table.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    for (size_t h = 0; h < dense_.size(); ++h)
      if (dense_[h].live) visit(static_cast<uint32_t>(h), dense_[h].object);
    for (const auto& [handle, object] : sparse_) visit(handle, object);
  }

 private:
  // CheckHandles for one handle field `f` at `at`.
  Result<void> CheckHandle(const abi::Field& f, size_t at, std::span<const std::byte> request,
                           std::string_view what) const;

  // The kernel hands out the lowest free handle of the file (xa_alloc on ufile->idr), so live
  // handles are small and dense: they index a flat table -- no hashing, no allocation per
  // object. A handle from kDense up (a kernel that does otherwise, a test's fake) goes to a map.
  static constexpr uint32_t kDense = 1u << 16;
  struct Slot {
    TrackedObject object;
    bool live = false;
  };
  std::vector<Slot> dense_;
  std::unordered_map<uint32_t, TrackedObject> sparse_;
  size_t size_ = 0;
  uint64_t next_serial_ = 1;
};

}  // namespace rxp::proxy
