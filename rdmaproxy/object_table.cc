#include "rdmaproxy/object_table.h"

#include <cerrno>
#include <utility>

#include "abi/payload.h"
#include "abi/write_decoder.h"

namespace rxp::proxy {

Result<const TrackedObject*> ObjectTable::Lookup(uint64_t handle, abi::ObjectId type) const {
  const TrackedObject* o = handle <= UINT32_MAX ? Find(static_cast<uint32_t>(handle)) : nullptr;
  if (o == nullptr)
    return Fail(ENOENT, "{} handle {} does not exist in this file", abi::ObjectShortName(type),
                handle);
  if (type != abi::kAnyObject && o->type != type)
    return Fail(EINVAL, "handle {} is a {}, not a {}", handle, abi::ObjectShortName(o->type),
                abi::ObjectShortName(type));
  return o;
}

Result<void> ObjectTable::CheckHandle(const abi::Field& f, size_t at,
                                      std::span<const std::byte> request,
                                      std::string_view what) const {
  const abi::HandleUse use = abi::HandleUseOf(f, request);
  if (use.object == abi::kNoObject) return Ok();  // the handler does not read it this time
  auto found = Lookup(abi::ReadField(request, at, f.size), use.object);
  if (found) return Ok();
  Error e = std::move(found).error();
  e.reason = fmt::format("{}: {}: {}", what, f.name, e.reason);
  if (use.lookup_errno != 0) e.errnum = use.lookup_errno;
  return e;
}

Result<void> ObjectTable::CheckHandles(const abi::Layout& layout,
                                       std::span<const std::byte> request,
                                       std::string_view what) const {
  Result<void> status = Ok();
  // Only handle fields are looked at: the test stays in the walk, the lookup is a call.
  abi::VisitFields(layout, 0, request.size(), [&](const abi::Field& f, size_t at) {
    if (f.kind != abi::FieldKind::kHandle) return true;
    status = CheckHandle(f, at, request, what);
    return status.ok();
  });
  return status;
}

Result<void> ObjectTable::CheckHandles(std::span<const abi::FieldAt> handles,
                                       std::span<const std::byte> request,
                                       std::string_view what) const {
  for (const abi::FieldAt& h : handles)
    if (h.offset + h.field->size <= request.size())  // as VisitFields skips the others
      RXP_TRY(CheckHandle(*h.field, h.offset, request, what));
  return Ok();
}

std::optional<TrackedObject> ObjectTable::Insert(uint32_t handle, TrackedObject object) {
  object.serial = next_serial_++;
  if (handle >= kDense) {
    auto [it, added] = sparse_.try_emplace(handle, object);
    if (added) {
      ++size_;
      return std::nullopt;
    }
    return std::exchange(it->second, object);
  }
  if (handle >= dense_.size()) dense_.resize(handle + 1);
  Slot& s = dense_[handle];
  std::optional<TrackedObject> before;
  if (s.live)
    before = s.object;
  else
    ++size_;
  s = {object, true};
  return before;
}

std::optional<TrackedObject> ObjectTable::Erase(uint32_t handle) {
  if (handle >= kDense) {
    auto it = sparse_.find(handle);
    if (it == sparse_.end()) return std::nullopt;
    TrackedObject o = it->second;
    sparse_.erase(it);
    --size_;
    return o;
  }
  if (handle >= dense_.size() || !dense_[handle].live) return std::nullopt;
  dense_[handle].live = false;
  --size_;
  return dense_[handle].object;
}

TrackedObject* ObjectTable::Find(uint32_t handle) {
  return const_cast<TrackedObject*>(std::as_const(*this).Find(handle));
}

const TrackedObject* ObjectTable::Find(uint32_t handle) const {
  if (handle >= kDense) {
    auto it = sparse_.find(handle);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  return handle < dense_.size() && dense_[handle].live ? &dense_[handle].object : nullptr;
}

}  // namespace rxp::proxy
