// Helpers shared by the LD_PRELOAD test shims (capture_preload.cc, fake_mlx5_preload.cc):
// finding the next definition of an interposed libc function, and touching the process's own
// memory the way the kernel's copy_{from,to}_user() would -- a bad pointer fails (EFAULT)
// instead of crashing the shim.
//
// Test tooling only.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
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

// The dup family for a shim that follows its fds into their copies: each forwards to the next
// definition and, when a new fd for `fd` exists, calls hook(fd, new_fd). The functions have
// internal linkage on purpose: their static "next definition" pointers must not be merged
// across the two shims of one process (each shim's next is a different library).
using DupHook = void (*)(int oldfd, int newfd);

namespace {

inline int DupVia(int fd, DupHook hook) {
  static auto real = Real<int (*)(int)>("dup");
  const int n = real(fd);
  if (n >= 0) hook(fd, n);
  return n;
}

inline int Dup2Via(int fd, int newfd, DupHook hook) {
  static auto real = Real<int (*)(int, int)>("dup2");
  const int n = real(fd, newfd);
  if (n >= 0 && n != fd) hook(fd, n);
  return n;
}

inline int Dup3Via(int fd, int newfd, int flags, DupHook hook) {
  static auto real = Real<int (*)(int, int, int)>("dup3");
  const int n = real(fd, newfd, flags);
  if (n >= 0) hook(fd, n);
  return n;
}

// fcntl() with its one argument (an int or a pointer: passed on as a pointer-sized word).
inline int FcntlVia(int fd, int cmd, void* arg, DupHook hook) {
  static auto real = Real<int (*)(int, int, ...)>("fcntl");
  const int n = real(fd, cmd, arg);
  if (n >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) hook(fd, n);
  return n;
}

}  // namespace

}  // namespace rxp::preload
