// What the C API's translation units share (c_api.cc: configs, sentries, files;
// c_api_sysfs.cc: the app's /sys): the handle states, the per-thread reason of the last
// failure, and Guard, which keeps every C++ exception inside the library.
#pragma once

#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "abi/result.h"
#include "rdmaproxy/c_handles.h"
#include "rdmaproxy/rdmaproxy.h"
#include "rdmaproxy/sentry.h"

namespace rxp::proxy::capi {

struct ConfigState {
  std::mutex mutex;
  SentryConfig config;
  // The quotas set one by one (rxp_config_set_quota): they stay over any policy set later,
  // which replaces everything else, its own quotas included.
  Quotas set_one_by_one;
  rxp_app_ops ops{};
  bool has_ops = false;
};

struct SentryState {
  std::unique_ptr<Sentry> sentry;
  rxp_app_ops ops{};
};

struct FileState {
  std::shared_ptr<SentryFile> file;
  std::shared_ptr<SentryState> sentry;  // the callbacks; outlives the sentry handle
};

// The reason of this thread's last failure. A host kernel error is recorded as its errno and
// file and only formatted when asked for (rxp_last_error), so failing calls stay cheap.
inline thread_local std::string last_error;
inline thread_local int kernel_errno = 0;
inline thread_local std::string kernel_error_file;
// Why the runtime's install_fd refused the last command's new fd: the command's reason, not
// the host kernel's (the engine logs it but has no refusal to record: the kernel ran it).
inline thread_local std::optional<rxp::Error> callback_failure;

inline int Failed(int errnum, std::string reason) {
  last_error = std::move(reason);
  kernel_errno = 0;
  return -errnum;
}
inline int Failed(const Error& e) { return Failed(e.errnum, e.ToString()); }

// Runs an entry point's body; C++ exceptions (allocation failure) end as -errno.
template <typename F>
auto Guard(F&& body) -> decltype(body()) {
  try {
    last_error.clear();
    kernel_errno = 0;
    return body();
  } catch (const std::bad_alloc&) {
    return Failed(ENOMEM, "ENOMEM: out of memory");
  } catch (const std::exception& e) {
    return Failed(EIO, std::string("EIO: internal error: ") + e.what());
  } catch (...) {
    return Failed(EIO, "EIO: internal error");
  }
}

template <typename T>
uint64_t Token(T* handle) {
  return reinterpret_cast<uint64_t>(handle);
}
template <typename T>
T* HandleOf(uint64_t token) {
  return reinterpret_cast<T*>(token);
}

inline std::shared_ptr<ConfigState> ConfigOf(const rxp_config* c) {
  return CHandles::Instance().Get<ConfigState>(Token(c));
}
inline std::shared_ptr<SentryState> SentryOf(rxp_sentry* s) {
  return CHandles::Instance().Get<SentryState>(Token(s));
}
inline std::shared_ptr<FileState> FileOf(rxp_file* f) {
  return CHandles::Instance().Get<FileState>(Token(f));
}

inline int BadConfig() { return Failed(EINVAL, "EINVAL: not a live rxp_config handle"); }
inline int BadSentry() { return Failed(EINVAL, "EINVAL: not a live rxp_sentry handle"); }
inline int BadFile() { return Failed(EBADF, "EBADF: not an open rxp_file handle"); }

}  // namespace rxp::proxy::capi
