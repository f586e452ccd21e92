// librxp_capture.so: an LD_PRELOAD shim that records, for a real rdma-core program, every
// ioctl() and write() it sends to /dev/infiniband/* and what came back, as ABI test vectors
// (tools/vectors.h). The schema tells it which attributes point to app memory, so it records
// exactly the bytes the kernel reads (before the call) and writes (after it).
//
//   RXP_CAPTURE=/tmp/out.jsonl LD_PRELOAD=.../librxp_capture.so ibv_devinfo
//
// Test tooling only: it runs inside the VM test bed when vectors are (re)captured.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "abi/ioctl_decoder.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"
#include "tests/tools/preload_util.h"
#include "tools/vectors.h"

namespace {

using nlohmann::json;

constexpr int kMaxFd = 4096;
constexpr size_t kMaxCapture = 1 << 20;  // never record more than 1 MiB of one buffer

struct TrackedFile {
  std::string name;        // "uverbs0", "rdma_cm"; empty = not tracked
  uint32_t driver_id = 0;  // learned from the first ioctl header
};

std::array<TrackedFile, kMaxFd> g_files;
std::mutex g_mutex;
int g_out = -1;
thread_local bool g_inside = false;  // our own syscalls must not be recorded
// ibv_devinfo -v asks for all 1024 GIDs of an rxe port, ~1000 of them ENODATA: a failure of
// the same method with the same errno is recorded only the first few times.
constexpr int kMaxSameFailure = 3;
std::map<std::pair<uint64_t, int>, int> g_failures;

bool RecordFailure(uint64_t what, int err) {
  if (err == 0) return true;
  std::lock_guard lock(g_mutex);
  return ++g_failures[{what, err}] <= kMaxSameFailure;
}

using rxp::preload::ReadSelf;
using rxp::preload::Real;

void Emit(const json& j) {
  const std::string line = j.dump() + "\n";
  std::lock_guard lock(g_mutex);
  if (g_out < 0) return;
  // One write per line on an O_APPEND fd keeps lines whole across forked processes.
  syscall(SYS_write, g_out, line.data(), line.size());
}

json Buffer(uint64_t addr, const std::vector<std::byte>& data) {
  char a[32];
  std::snprintf(a, sizeof(a), "%#llx", static_cast<unsigned long long>(addr));
  return json{{"addr", a}, {"data", rxp::tools::ToHex(data)}};
}

std::string Basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

void Track(int fd, const char* path) {
  if (fd < 0 || fd >= kMaxFd || path == nullptr) return;
  if (std::strncmp(path, "/dev/infiniband/", 16) != 0) return;
  g_files[static_cast<size_t>(fd)] = {Basename(path), 0};
}

// A new fd for a tracked file (dup, dup2, dup3, F_DUPFD) is tracked too: ibv_import_device()
// runs on a dup()ed command fd.
void TrackDup(int oldfd, int newfd) {
  if (newfd >= kMaxFd) return;
  if (oldfd >= 0 && oldfd < kMaxFd)
    g_files[static_cast<size_t>(newfd)] = g_files[static_cast<size_t>(oldfd)];
  else
    g_files[static_cast<size_t>(newfd)].name.clear();
}

const TrackedFile* Tracked(int fd) {
  if (fd < 0 || fd >= kMaxFd || g_files[static_cast<size_t>(fd)].name.empty()) return nullptr;
  return &g_files[static_cast<size_t>(fd)];
}

__attribute__((constructor)) void Init() {
  const char* path = std::getenv("RXP_CAPTURE");
  if (path == nullptr) return;
  g_out = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path,
                                   O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (g_out < 0) return;
  // The header line is written once, by the first process that finds the file empty.
  if (lseek(g_out, 0, SEEK_END) != 0) return;
  std::string cmdline;
  if (FILE* f = std::fopen("/proc/self/cmdline", "r")) {
    int c;
    while ((c = std::fgetc(f)) != EOF) cmdline += c == 0 ? ' ' : static_cast<char>(c);
    std::fclose(f);
  }
  while (!cmdline.empty() && cmdline.back() == ' ') cmdline.pop_back();
  utsname u{};
  uname(&u);
  // A capture against a fake kernel (tests/tools/fake_mlx5_preload.cc) names it instead.
  const char* kernel = std::getenv("RXP_CAPTURE_KERNEL");
  Emit(json{{"format", "rdmaproxy-abi-vectors"}, {"version", 1}, {"program", cmdline},
            {"kernel", kernel != nullptr ? kernel : u.release}});
}

long CaptureIoctl(int fd, unsigned long request, void* arg, TrackedFile& file) {
  using OrigIoctl = int (*)(int, unsigned long, ...);
  static auto real = Real<OrigIoctl>("ioctl");
  std::vector<std::byte> head;
  if (!ReadSelf(reinterpret_cast<uint64_t>(arg), sizeof(rxp::abi::IoctlHeader), head))
    return real(fd, request, arg);
  rxp::abi::IoctlHeader h;
  std::memcpy(&h, head.data(), sizeof(h));
  if (file.driver_id == 0) file.driver_id = h.driver_id;
  std::vector<std::byte> req;
  ReadSelf(reinterpret_cast<uint64_t>(arg), h.length, req);
  rxp::abi::IoctlRequest decoded;
  const auto device = rxp::abi::DeviceAbiFor(h.driver_id);
  const bool ok = rxp::abi::DecodeIoctl(req, device, decoded).ok();
  json in = json::array();
  if (ok)
    for (const auto& a : decoded.Attrs())
      if (a.IsPointer() && a.spec->type != rxp::abi::AttrType::kPtrOut) {
        std::vector<std::byte> data;
        if (ReadSelf(a.data, a.len, data)) in.push_back(Buffer(a.data, data));
      }
  const int ret = real(fd, request, arg);
  const int err = ret < 0 ? errno : 0;
  std::vector<std::byte> after;
  ReadSelf(reinterpret_cast<uint64_t>(arg) + sizeof(h), h.length - sizeof(h), after);
  json out = json::array();
  if (ok && ret == 0)
    for (const auto& a : decoded.Attrs())
      if (a.spec != nullptr && a.spec->type == rxp::abi::AttrType::kPtrOut) {
        std::vector<std::byte> data;
        if (ReadSelf(a.data, a.len, data)) out.push_back(Buffer(a.data, data));
      }
  if (!RecordFailure(uint64_t{h.object_id} << 16 | h.method_id, err)) {
    errno = err;
    return ret;
  }
  Emit(json{{"file", file.name}, {"driver_id", file.driver_id}, {"syscall", "ioctl"},
            {"request", rxp::tools::ToHex(req)}, {"in", in}, {"ret", ret}, {"errno", err},
            {"attrs_after", rxp::tools::ToHex(after)}, {"out", out}});
  errno = err;
  return ret;
}

ssize_t CaptureWrite(int fd, const void* buf, size_t count, const TrackedFile& file) {
  using OrigWrite = ssize_t (*)(int, const void*, size_t);
  static auto real = Real<OrigWrite>("write");
  std::vector<std::byte> req;
  ReadSelf(reinterpret_cast<uint64_t>(buf), count < kMaxCapture ? count : kMaxCapture, req);
  uint64_t resp = 0, dresp = 0;
  uint32_t resp_len = 0, dresp_len = 0;
  if (file.name == "rdma_cm") {
    if (auto r = rxp::abi::DecodeUcmaWrite(req)) {
      resp = r->response;
      resp_len = r->response_len;
    }
  } else if (auto r = rxp::abi::DecodeWrite(req, rxp::abi::DeviceAbiFor(file.driver_id))) {
    resp = r->response;
    resp_len = r->response_len;
    dresp = r->driver_response;
    dresp_len = r->driver_response_len;
  }
  const ssize_t ret = real(fd, buf, count);
  const int err = ret < 0 ? errno : 0;
  json out = json::array();
  std::vector<std::byte> data;
  if (ret >= 0 && resp != 0 && resp_len <= kMaxCapture && ReadSelf(resp, resp_len, data))
    out.push_back(Buffer(resp, data));
  if (ret >= 0 && dresp != 0 && dresp_len <= kMaxCapture && ReadSelf(dresp, dresp_len, data))
    out.push_back(Buffer(dresp, data));
  uint32_t command = 0;
  if (req.size() >= sizeof(command)) std::memcpy(&command, req.data(), sizeof(command));
  if (!RecordFailure(uint64_t{1} << 40 | command, err)) {
    errno = err;
    return ret;
  }
  Emit(json{{"file", file.name}, {"driver_id", file.driver_id}, {"syscall", "write"},
            {"request", rxp::tools::ToHex(req)}, {"ret", ret}, {"errno", err}, {"out", out}});
  errno = err;
  return ret;
}

// RAII guard for the reentrancy flag.
struct Inside {
  Inside() { g_inside = true; }
  ~Inside() { g_inside = false; }
};

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  using Orig = int (*)(const char*, int, ...);
  static auto real = Real<Orig>("open");
  mode_t mode = 0;
  if ((flags & (O_CREAT | O_TMPFILE)) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  const int fd = real(path, flags, mode);
  if (!g_inside) Track(fd, path);
  return fd;
}
int open64(const char* path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char* path, int flags, ...) {
  using Orig = int (*)(int, const char*, int, ...);
  static auto real = Real<Orig>("openat");
  mode_t mode = 0;
  if ((flags & (O_CREAT | O_TMPFILE)) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  const int fd = real(dirfd, path, flags, mode);
  if (!g_inside) Track(fd, path);
  return fd;
}
int openat64(int dirfd, const char* path, int flags, ...) __attribute__((alias("openat")));

int close(int fd) {
  using Orig = int (*)(int);
  static auto real = Real<Orig>("close");
  if (fd >= 0 && fd < kMaxFd) g_files[static_cast<size_t>(fd)].name.clear();
  return real(fd);
}

int dup(int fd) { return rxp::preload::DupVia(fd, TrackDup); }
int dup2(int fd, int newfd) { return rxp::preload::Dup2Via(fd, newfd, TrackDup); }
int dup3(int fd, int newfd, int flags) {
  return rxp::preload::Dup3Via(fd, newfd, flags, TrackDup);
}
int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return rxp::preload::FcntlVia(fd, cmd, arg, TrackDup);
}
int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

int ioctl(int fd, unsigned long request, ...) {
  using Orig = int (*)(int, unsigned long, ...);
  static auto real = Real<Orig>("ioctl");
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  TrackedFile* f = g_inside ? nullptr : const_cast<TrackedFile*>(Tracked(fd));
  if (f == nullptr || request != RDMA_VERBS_IOCTL || g_out < 0) return real(fd, request, arg);
  Inside guard;
  return static_cast<int>(CaptureIoctl(fd, request, arg, *f));
}

ssize_t write(int fd, const void* buf, size_t count) {
  using Orig = ssize_t (*)(int, const void*, size_t);
  static auto real = Real<Orig>("write");
  const TrackedFile* f = g_inside ? nullptr : Tracked(fd);
  if (f == nullptr || g_out < 0) return real(fd, buf, count);
  Inside guard;
  return CaptureWrite(fd, buf, count, *f);
}

}  // extern "C"
