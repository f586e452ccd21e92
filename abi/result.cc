#include "abi/result.h"

#include <cstring>

namespace rxp {

std::string Error::ToString() const {
  // strerrorname_np is glibc >= 2.32 (Debian 12 has 2.36); it gives "EINVAL", not prose.
  const char* name = strerrorname_np(errnum);
  return fmt::format("{}: {}", name != nullptr ? name : fmt::format("errno {}", errnum), reason);
}

}  // namespace rxp
