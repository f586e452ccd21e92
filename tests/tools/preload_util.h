// Helpers shared by the LD_PRELOAD test shims (capture_preload.cc, fake_mlx5_preload.cc):
// finding the next definition of an interposed libc function, and touching the process's own
// memory the way the kernel's copy_{from,to}_user() would -- a bad pointer fails (EFAULT)
// instead of crashing the shim.
//
// Test tooling only.
#pragma once

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rxp::preload {

// The next definition of `name` after this shim (libc, or the next preloaded shim).
template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// copy_from_user(): `len` bytes at `addr` of this process into `out`; false if not readable.
inline bool ReadSelf(uint64_t addr, size_t len, void* out) {
  if (len == 0) return true;
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

inline bool ReadSelf(uint64_t addr, size_t len, std::vector<std::byte>& out) {
  out.resize(len);
  return ReadSelf(addr, len, out.data());
}

// copy_to_user(): `len` bytes of `in` to `addr` of this process; false if not writable.
inline bool WriteSelf(uint64_t addr, const void* in, size_t len) {
  if (len == 0) return true;
  iovec local{const_cast<void*>(in), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}  // namespace rxp::preload
