#include "rdmaproxy/object_table.h"

#include <cerrno>

#include "abi/payload.h"
#include "abi/write_decoder.h"

namespace rxp::proxy {

Result<const TrackedObject*> ObjectTable::Lookup(uint64_t handle, abi::ObjectId type) const {
  auto it = handle <= UINT32_MAX ? objects_.find(static_cast<uint32_t>(handle)) : objects_.end();
  if (it == objects_.end())
    return Fail(ENOENT, "{} handle {} does not exist in this file", abi::ObjectShortName(type),
                handle);
  if (type != abi::kAnyObject && it->second.type != type)
    return Fail(EINVAL, "handle {} is a {}, not a {}", handle,
                abi::ObjectShortName(it->second.type), abi::ObjectShortName(type));
  return &it->second;
}

Result<void> ObjectTable::CheckHandles(const abi::Layout& layout,
                                       std::span<const std::byte> request,
                                       std::string_view what) const {
  Result<void> status = Ok();
  abi::VisitFields(layout, 0, request.size(), [&](const abi::Field& f, size_t at) {
    if (f.kind != abi::FieldKind::kHandle) return true;
    const abi::HandleUse use = abi::HandleUseOf(f, request);
    if (use.object == abi::kNoObject) return true;  // the handler does not read it this time
    auto found = Lookup(abi::ReadField(request, at, f.size), use.object);
    if (found) return true;
    Error e = std::move(found).error();
    e.reason = fmt::format("{}: {}: {}", what, f.name, e.reason);
    if (use.lookup_errno != 0) e.errnum = use.lookup_errno;
    status = std::move(e);
    return false;
  });
  return status;
}

void ObjectTable::Insert(uint32_t handle, TrackedObject object) { objects_[handle] = object; }

std::optional<TrackedObject> ObjectTable::Erase(uint32_t handle) {
  auto it = objects_.find(handle);
  if (it == objects_.end()) return std::nullopt;
  TrackedObject o = it->second;
  objects_.erase(it);
  return o;
}

TrackedObject* ObjectTable::Find(uint32_t handle) {
  auto it = objects_.find(handle);
  return it == objects_.end() ? nullptr : &it->second;
}

}  // namespace rxp::proxy
