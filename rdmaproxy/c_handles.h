// CHandles: the C API's handle table. A handle is a never-reused 64-bit token (not a pointer),
// so a destroyed, closed or made-up handle is found missing and reported (-EINVAL / -EBADF)
// instead of being dereferenced; a call in flight keeps its object alive through a shared_ptr
// even if another thread closes the handle meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <variant>

namespace rxp::proxy::capi {

struct ConfigState;
struct SentryState;
struct FileState;
struct SysfsState;

class CHandles {
 public:
  using Object = std::variant<std::shared_ptr<ConfigState>, std::shared_ptr<SentryState>,
                              std::shared_ptr<FileState>, std::shared_ptr<SysfsState>>;

  // Inline: every C API call starts here.
  static CHandles& Instance() {
    static CHandles handles;
    return handles;
  }

  uint64_t Add(Object object);
  // The object behind `token` if it is a live handle of type T, else null.
  template <typename T>
  std::shared_ptr<T> Get(uint64_t token) const {
    std::shared_lock lock(mutex_);
    auto it = objects_.find(token);
    if (it == objects_.end()) return nullptr;
    auto* p = std::get_if<std::shared_ptr<T>>(&it->second);
    return p != nullptr ? *p : nullptr;
  }
  // Removes a live handle of type T; false if it is not one.
  template <typename T>
  bool Remove(uint64_t token) {
    std::shared_ptr<T> last;  // destroyed after the lock is released
    std::unique_lock lock(mutex_);
    auto it = objects_.find(token);
    if (it == objects_.end() || !std::holds_alternative<std::shared_ptr<T>>(it->second))
      return false;
    last = std::get<std::shared_ptr<T>>(std::move(it->second));
    objects_.erase(it);
    return true;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<uint64_t, Object> objects_;
  // Tokens start high and step by 16 so that small integers, NULL and most pointers to
  // real memory are never valid handles.
  uint64_t next_ = 0x5250'0000'0000'0010;
};

}  // namespace rxp::proxy::capi
