// Sentry mode: the library holds the host device files and issues the syscalls itself, for a
// sandbox runtime that runs the app in its own kernel-in-userspace (gVisor's Sentry, or any
// runtime that links rdmaproxy). The app's memory is not the runtime's memory at the same
// address and the app's fd numbers are not host fd numbers, so every pointer and fd in a
// command is really translated (AppMemory::HostAddress, the SentryFdTable), never passed
// through. docs/embedding.md has the ownership and threading rules; rdmaproxy.h is the C API
// over this header.
//
//   auto sentry = Sentry::Create(config);                  // devices, policy, quotas, sinks
//   auto file = (*sentry)->Open("/dev/infiniband/uverbs0", O_RDWR);
//   long r = (*file)->Ioctl(app, RDMA_VERBS_IOCTL, app_arg);  // app = {memory, fd table}
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"
#include "rdmaproxy/embedder.h"
#include "rdmaproxy/engine.h"
#include "rdmaproxy/policy.h"

namespace rxp::proxy {

class SentryFile;

// What an app fd stands for, as the runtime's fd table knows it.
struct AppFdTarget {
  std::shared_ptr<SentryFile> file;  // one of this library's files, or
  int host_fd = -1;                  // a host fd of another kind (a dma-buf from the GPU side)
  FileKind kind = FileKind::kOther;  // the kind of host_fd when `file` is null
};

// The runtime's fd table, as far as commands need it: fds the app names inside commands (a
// completion channel in CREATE_CQ, a dma-buf in REG_DMABUF_MR, an rdma_cm file in MIGRATE_ID)
// and fds the kernel creates inside responses (the async event fd, completion channels).
class SentryFdTable {
 public:
  virtual ~SentryFdTable() = default;
  // What the app's fd `app_fd` is; EBADF when the app has no such fd.
  virtual Result<AppFdTarget> Lookup(int app_fd) = 0;
  // Installs `file` as a new fd of the app and returns its number. The table keeps the
  // reference until the app closes the fd; the host fd closes when the last reference goes.
  virtual Result<int> Install(std::shared_ptr<SentryFile> file) = 0;
};

// The app a call comes from: its memory and its fd table (per process in a multi-process
// sandbox, hence per call).
struct AppContext {
  AppMemory& memory;
  SentryFdTable& fds;
};

// A device the sandbox sees at /dev/infiniband/<sandbox_name>.
struct SentryDevice {
  std::string sandbox_name;  // "uverbs0"
  std::string host_path;     // "/dev/infiniband/uverbs3"
  uint32_t driver_id = 0;    // enum rdma_driver_id (host_rdma_devices.h finds it)
  std::string ibdev;         // "mlx5_2", for logs; may be empty
};

// A sandbox_name the app can open as /dev/infiniband/<name>: one plain path component (not
// "." or "..", which name the directory or /dev), no control bytes, not rdma_cm's. EINVAL.
Result<void> CheckSandboxDeviceName(std::string_view name);

struct SentryConfig {
  std::vector<SentryDevice> devices;
  bool rdma_cm = true;  // serve /dev/infiniband/rdma_cm (from rdma_cm_host_path)
  std::string rdma_cm_host_path = "/dev/infiniband/rdma_cm";
  // The sandbox's network namespace for rdma_cm (a path: /proc/<pid>/ns/net, /run/netns/NAME):
  // the library creates every rdma_cm id from a thread of its own in that namespace, so the
  // app's addresses bind and resolve there (netns_thread.h). Empty: the namespace of the
  // thread that calls Write.
  std::string rdma_cm_netns;
  PolicyConfig policy;
  LineSink log;    // one line per denial; default stderr
  LineSink trace;  // one line per command when set
};

// Where an mmap of a uverbs file must come from: map `length` bytes of `host_fd` at `offset`
// (MAP_SHARED) into the app, then call SentryFile::CommitMmap.
struct MmapGrant {
  int host_fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// One open file of the app that the library serves. Thread-safe; commands on one uverbs file
// run one at a time (none of them blocks in the kernel). Every call returns what the app's
// syscall returns: >= 0, or -errno (the reason of a proxy refusal is in the log).
class SentryFile {
 public:
  virtual ~SentryFile() = default;
  virtual FileKind kind() const = 0;
  // "uverbs0", "rdma_cm", "uverbs0/async_event", "uverbs0/comp_channel".
  virtual const std::string& label() const = 0;
  // The host fd, for the runtime's poller (epoll it, never read or write it directly).
  virtual int host_fd() const = 0;
  // The engine id of the uverbs file this file belongs to (its own for a uverbs file; the
  // owner of an async event fd or completion channel), 0 for others.
  virtual uint64_t engine_id() const { return 0; }

  virtual long Ioctl(AppContext& app, unsigned long request, uint64_t arg);
  // write(2) / read(2). A file not opened for writing (reading) is EBADF whatever the bytes
  // say, as vfs_write()/vfs_read() answer before the file's own operation: an app open of
  // O_RDONLY, and every async event fd and completion channel (the kernel makes them O_RDONLY).
  long Write(AppContext& app, uint64_t buffer, uint64_t length);
  long Read(AppContext& app, uint64_t buffer, uint64_t length);
  // poll(2) of the host file with no wait: the ready events among `events`.
  virtual Result<short> Poll(short events);
  // fcntl(F_SETFL, O_NONBLOCK) as the app asked: reads and rdma_cm GET_EVENT then return
  // EAGAIN instead of blocking the calling runtime thread.
  virtual Result<void> SetNonblocking(bool nonblocking);
  // mmap of a uverbs file in two steps (the runtime maps into the app's address space itself)
  // or in one (Mmap maps it into this process and returns where).
  virtual Result<MmapGrant> PrepareMmap(uint64_t offset, uint64_t length, int prot);
  // EINVAL for an offset no PrepareMmap passed, or one committed already.
  virtual Result<void> CommitMmap(uint64_t offset);
  Result<void*> Mmap(uint64_t length, int prot, int flags, uint64_t offset);

 protected:
  // `access_mode`: the O_ACCMODE bits the file was opened with.
  explicit SentryFile(int access_mode) : access_mode_(access_mode) {}
  // The file's own write/read, once the access mode allowed it.
  virtual long DoWrite(AppContext& app, uint64_t buffer, uint64_t length);
  virtual long DoRead(AppContext& app, uint64_t buffer, uint64_t length);
  // The engine the file's refusals are logged and counted by.
  virtual Engine& OwningEngine() const = 0;

 private:
  long RefuseAccess(std::string_view operation);
  int access_mode_;
};

class Sentry {
 public:
  static Result<std::unique_ptr<Sentry>> Create(SentryConfig config);
  ~Sentry();
  Sentry(const Sentry&) = delete;
  Sentry& operator=(const Sentry&) = delete;

  // open(2) of a path in the sandbox: /dev/infiniband/<sandbox device>, /dev/infiniband/rdma_cm.
  // ENOENT for a device the sandbox does not have; the host's errno otherwise.
  Result<std::shared_ptr<SentryFile>> Open(std::string_view path, int flags);

  const std::vector<SentryDevice>& devices() const;
  Engine& engine();

  struct State;

 private:
  explicit Sentry(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;  // shared with every open file, which may outlive the Sentry
};

}  // namespace rxp::proxy
