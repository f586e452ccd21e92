#include "rdmaproxy/object_table.h"

#include <cerrno>

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
