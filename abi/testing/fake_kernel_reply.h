// Test helpers for a fake ib_uverbs: what the kernel does with an ioctl image when it answers
// one (uverbs_copy_to() and the attribute lookup of ib_uverbs_cmd_verbs()). Used by the
// programs that stand a fake kernel behind the library's host calls (rxp_sentry_native_bench,
// the C API's threading tests).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "abi/uapi.h"

namespace rxp::abi::testing {

// The attribute `id` of the request `h`, or nullptr.
inline ib_uverbs_attr* FindAttr(ib_uverbs_ioctl_hdr* h, uint16_t id) {
  for (uint16_t i = 0; i < h->num_attrs; ++i)
    if (h->attrs[i].attr_id == id) return &h->attrs[i];
  return nullptr;
}

// What uverbs_copy_to() does: the bytes (at most the attribute's length) at the attribute's
// pointer, then UVERBS_ATTR_F_VALID_OUTPUT in the caller's attribute. -EINVAL without one.
template <typename T>
long CopyToAttr(ib_uverbs_attr* a, const T& value) {
  if (a == nullptr) return -EINVAL;
  std::memcpy(reinterpret_cast<void*>(a->data), &value, std::min<size_t>(a->len, sizeof(T)));
  a->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
  return 0;
}

// A fake kernel's -errno result as a libc call returns it: -1 with errno set, else the value.
inline long AsLibcResult(long r) {
  if (r >= 0) return r;
  errno = static_cast<int>(-r);
  return -1;
}

}  // namespace rxp::abi::testing
