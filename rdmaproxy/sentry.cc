#include "rdmaproxy/sentry.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "abi/one_line.h"
#include "rdmaproxy/cm_file.h"
#include "rdmaproxy/host_device_file.h"
#include "rdmaproxy/netns_thread.h"
#include "rdmaproxy/uverbs_file.h"

namespace rxp::proxy {

struct Sentry::State {
  explicit State(SentryConfig c)
      : config(std::move(c)),
        engine(EngineOptions{config.policy, config.log, config.trace}) {}
  SentryConfig config;
  Engine engine;
  std::unique_ptr<NetnsThread> rdma_cm_netns;  // set when config.rdma_cm_netns names one
};

namespace {

constexpr std::string_view kDeviceDir = "/dev/infiniband/";
// ib_uverbs_event_read and ucma copy one event per read; a page bounds any of them.
constexpr uint64_t kMaxEventRead = 4096;

long Errno(const Error& e) { return -static_cast<long>(e.errnum); }

std::shared_ptr<SentryFile> MakeEventFile(const std::shared_ptr<Sentry::State>& state,
                                          const std::string& owner_label, UniqueFd fd,
                                          FileKind kind, uint64_t owner);

// The engine's FdBridge over the runtime's fd table, for one command of one uverbs / rdma_cm
// file. Files the app names stay referenced until the command is over, so their host fds
// cannot close under the kernel.
class CallFds final : public FdBridge {
 public:
  // `owner_label`: the uverbs file whose commands may create event fds; null for rdma_cm,
  // whose responses carry none. Both outlive the call.
  CallFds(SentryFdTable& table, const std::shared_ptr<Sentry::State>& state,
          const std::string* owner_label)
      : table_(table), state_(state), owner_label_(owner_label) {}

  Result<HostFile> Resolve(int app_fd) override {
    auto target = table_.Lookup(app_fd);
    if (!target) return std::move(target).error();
    if (target->file) {
      HostFile f{target->file->host_fd(), target->file->kind(), target->file->engine_id()};
      held_.push_back(std::move(target->file));
      return f;
    }
    if (target->host_fd < 0) return Fail(EBADF, "app fd {} has no host file", app_fd);
    return HostFile{target->host_fd, target->kind, 0};
  }

  // The kernel created `fd` in this process (an async event fd, a completion channel): it
  // becomes a library file the runtime installs as an app fd. If it cannot, the file -- and
  // the host fd -- is dropped here, so nothing leaks.
  Result<int> Adopt(int fd, FileKind kind, uint64_t owner) override {
    UniqueFd host(fd);
    std::shared_ptr<SentryFile> file;
    if (owner_label_ != nullptr)
      file = MakeEventFile(state_, *owner_label_, std::move(host), kind, owner);
    return table_.Install(std::move(file));
  }

 private:
  SentryFdTable& table_;
  const std::shared_ptr<Sentry::State>& state_;
  const std::string* owner_label_;
  std::vector<std::shared_ptr<SentryFile>> held_;
};

// An async event fd or a completion channel the kernel created for a uverbs file.
class EventSentryFile final : public SentryFile {
 public:
  // The kernel opens both O_RDONLY (their UVERBS_TYPE_ALLOC_FD flags): a write is EBADF.
  EventSentryFile(std::shared_ptr<Sentry::State> state, FileKind kind, std::string label,
                  uint64_t owner, UniqueFd fd)
      : SentryFile(O_RDONLY), state_(std::move(state)), kind_(kind), label_(std::move(label)),
        owner_(owner), host_(std::move(fd)) {}

  FileKind kind() const override { return kind_; }
  const std::string& label() const override { return label_; }
  int host_fd() const override { return host_.fd(); }
  Engine& OwningEngine() const override { return state_->engine; }
  uint64_t engine_id() const override { return owner_; }

  // ib_uverbs_event_read: one ib_uverbs_comp_event_desc / ib_uverbs_async_event_desc per
  // read. The user handles inside are the app's own values (never translated), so the bytes
  // go to the app as the kernel wrote them.
  long DoRead(AppContext& app, uint64_t buffer, uint64_t length) override {
    std::array<std::byte, kMaxEventRead> bounce;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(length, bounce.size()));
    const ssize_t r = ::read(host_.fd(), bounce.data(), n);
    if (r < 0) return -errno;
    if (auto w = app.memory.Write(buffer, std::span(bounce.data(), static_cast<size_t>(r))); !w) {
      state_->engine.Refused(label_, w.error(), Refusal::kState);
      return Errno(w.error());
    }
    return r;
  }

 private:
  std::shared_ptr<Sentry::State> state_;
  FileKind kind_;
  std::string label_;
  uint64_t owner_;
  HostDeviceFile host_;
};

std::shared_ptr<SentryFile> MakeEventFile(const std::shared_ptr<Sentry::State>& state,
                                          const std::string& owner_label, UniqueFd fd,
                                          FileKind kind, uint64_t owner) {
  const char* suffix = kind == FileKind::kAsyncEvent ? "/async_event" : "/comp_channel";
  return std::make_shared<EventSentryFile>(state, kind, owner_label + suffix, owner,
                                           std::move(fd));
}

// /dev/infiniband/uverbsN of the sandbox: one host open file, one UverbsFile.
class UverbsSentryFile final : public SentryFile {
 public:
  UverbsSentryFile(std::shared_ptr<Sentry::State> state, int access_mode, HostDeviceFile host,
                   std::unique_ptr<UverbsFile> file)
      : SentryFile(access_mode), state_(std::move(state)), host_(std::move(host)),
        file_(std::move(file)) {}
  ~UverbsSentryFile() override { file_->Closed(); }

  FileKind kind() const override { return FileKind::kUverbs; }
  const std::string& label() const override { return file_->label(); }
  int host_fd() const override { return host_.fd(); }
  Engine& OwningEngine() const override { return state_->engine; }
  uint64_t engine_id() const override { return file_->id(); }

  long Ioctl(AppContext& app, unsigned long request, uint64_t arg) override {
    // ib_uverbs_ioctl answers every other request with -ENOIOCTLCMD (ENOTTY); none is
    // forwarded.
    if (request != RDMA_VERBS_IOCTL) {
      auto e = Fail(ENOTTY, "ioctl request {:#x} is not RDMA_VERBS_IOCTL", request);
      state_->engine.RefusedCommand(label(), e, Refusal::kDecode);
      return Errno(e);
    }
    CallFds fds(app.fds, state_, &file_->label());
    return file_->Ioctl(app.memory, fds, host_, arg);
  }

  long DoWrite(AppContext& app, uint64_t buffer, uint64_t length) override {
    CallFds fds(app.fds, state_, &file_->label());
    return file_->Write(app.memory, fds, host_, buffer, length);
  }

  Result<MmapGrant> PrepareMmap(uint64_t offset, uint64_t length, int prot) override {
    RXP_TRY(file_->CheckMmap(offset, length, prot));
    return MmapGrant{host_.fd(), offset, length};
  }
  Result<void> CommitMmap(uint64_t offset) override { return file_->Mapped(offset); }

 private:
  std::shared_ptr<Sentry::State> state_;
  HostDeviceFile host_;
  std::unique_ptr<UverbsFile> file_;  // serializes its own commands
};

// The rdma_cm host file as seen from the sandbox's network namespace: a CREATE_ID, the one
// command that takes the caller's namespace (ucma_create_id -> rdma_create_user_id), is written
// from the namespace's thread; every other command acts on an id and its namespace, and runs
// on the calling thread (GET_EVENT may block there).
class CmHostInNetns final : public HostDevice {
 public:
  CmHostInNetns(HostDevice& host, NetnsThread& netns) : host_(host), netns_(netns) {}
  Result<long> Ioctl(unsigned long request, void* arg) override {
    return host_.Ioctl(request, arg);
  }
  Result<long> Write(const void* buffer, size_t length) override {
    rdma_ucm_cmd_hdr header{};
    if (length >= sizeof(header)) std::memcpy(&header, buffer, sizeof(header));
    if (length < sizeof(header) || header.cmd != RDMA_USER_CM_CMD_CREATE_ID)
      return host_.Write(buffer, length);
    Result<long> result = Fail(EIO, "rdma_cm CREATE_ID: not run");
    netns_.Run([&] { result = host_.Write(buffer, length); });
    return result;
  }
  int fd() const override { return host_.fd(); }

 private:
  HostDevice& host_;
  NetnsThread& netns_;
};

// /dev/infiniband/rdma_cm: write() commands only. GET_EVENT may block in the kernel, so no
// lock is held around the forward (CmFile guards its own id set).
class CmSentryFile final : public SentryFile {
 public:
  CmSentryFile(std::shared_ptr<Sentry::State> state, int access_mode, HostDeviceFile host,
               std::unique_ptr<CmFile> file)
      : SentryFile(access_mode), state_(std::move(state)), host_(std::move(host)),
        file_(std::move(file)) {}

  FileKind kind() const override { return FileKind::kRdmaCm; }
  const std::string& label() const override { return file_->label(); }
  int host_fd() const override { return host_.fd(); }
  Engine& OwningEngine() const override { return state_->engine; }

  long DoWrite(AppContext& app, uint64_t buffer, uint64_t length) override {
    CallFds fds(app.fds, state_, nullptr);
    if (state_->rdma_cm_netns) {
      CmHostInNetns host(host_, *state_->rdma_cm_netns);
      return file_->Write(app.memory, fds, host, buffer, length);
    }
    return file_->Write(app.memory, fds, host_, buffer, length);
  }

 private:
  std::shared_ptr<Sentry::State> state_;
  HostDeviceFile host_;
  std::unique_ptr<CmFile> file_;
};

}  // namespace

// What the kernel answers for a file operation the file does not have (vfs_write/vfs_read:
// no FMODE_CAN_WRITE / FMODE_CAN_READ, EINVAL).
long SentryFile::Ioctl(AppContext&, unsigned long, uint64_t) { return -ENOTTY; }
long SentryFile::DoWrite(AppContext&, uint64_t, uint64_t) { return -EINVAL; }
long SentryFile::DoRead(AppContext&, uint64_t, uint64_t) { return -EINVAL; }

long SentryFile::RefuseAccess(std::string_view operation) {
  const char* mode = access_mode_ == O_RDONLY   ? "O_RDONLY"
                     : access_mode_ == O_WRONLY ? "O_WRONLY"
                                                : "with access mode 3";
  auto e = Fail(EBADF, "{} of a file opened {}", operation, mode);
  OwningEngine().RefusedCommand(label(), e, Refusal::kState);
  return Errno(e);
}

long SentryFile::Write(AppContext& app, uint64_t buffer, uint64_t length) {
  if (!OpenedForWriting(access_mode_)) return RefuseAccess("write");  // vfs_write()
  return DoWrite(app, buffer, length);
}
long SentryFile::Read(AppContext& app, uint64_t buffer, uint64_t length) {
  if (!OpenedForReading(access_mode_)) return RefuseAccess("read");  // vfs_read()
  return DoRead(app, buffer, length);
}

Result<short> SentryFile::Poll(short events) {
  pollfd p{host_fd(), events, 0};
  const int r = ::poll(&p, 1, 0);
  if (r < 0) return Fail(errno, "poll of {}: {}", label(), std::strerror(errno));
  return static_cast<short>(p.revents);
}

Result<void> SentryFile::SetNonblocking(bool nonblocking) {
  const int flags = ::fcntl(host_fd(), F_GETFL);
  if (flags < 0) return Fail(errno, "fcntl F_GETFL of {}", label());
  const int want = nonblocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
  if (want != flags && ::fcntl(host_fd(), F_SETFL, want) < 0)
    return Fail(errno, "fcntl F_SETFL of {}", label());
  return Ok();
}

Result<MmapGrant> SentryFile::PrepareMmap(uint64_t, uint64_t, int) {
  return Fail(ENODEV, "{} cannot be mapped", label());  // no ->mmap: mmap_region's ENODEV
}
Result<void> SentryFile::CommitMmap(uint64_t) {
  return Fail(ENODEV, "{} cannot be mapped", label());  // as PrepareMmap: nothing to commit
}

Result<void*> SentryFile::Mmap(uint64_t length, int prot, int flags, uint64_t offset) {
  // MAP_SHARED_VALIDATE is MAP_SHARED with the flags checked, which these are; the address is
  // the library's to pick (there is none to ask for), so MAP_FIXED* has no meaning here.
  if ((flags & MAP_TYPE) != MAP_SHARED && (flags & MAP_TYPE) != MAP_SHARED_VALIDATE)
    return Fail(EINVAL, "{}: device pages are mapped MAP_SHARED only", label());
  if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) != 0)
    return Fail(EINVAL, "{}: MAP_FIXED: the library picks where the pages go", label());
  auto grant = PrepareMmap(offset, length, prot);
  if (!grant) return std::move(grant).error();
  void* at = ::mmap(nullptr, length, prot, MAP_SHARED, grant->host_fd,
                    static_cast<off_t>(grant->offset));
  if (at == MAP_FAILED)
    return Fail(errno, "{}: mmap of offset {:#x}: {}", label(), offset, std::strerror(errno));
  if (auto committed = CommitMmap(offset); !committed) {
    ::munmap(at, length);  // cannot happen after a passed PrepareMmap; never leave a mapping
    return std::move(committed).error();
  }
  return at;
}

Sentry::Sentry(std::shared_ptr<State> state) : state_(std::move(state)) {}
Sentry::~Sentry() = default;

Result<void> CheckSandboxDeviceName(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == ".." ||
      HasControlBytes(name) || name == "rdma_cm")
    return Fail(EINVAL, "\"{}\" is not a device name", OneLine(name));
  return Ok();
}

Result<std::unique_ptr<Sentry>> Sentry::Create(SentryConfig config) {
  for (size_t i = 0; i < config.devices.size(); ++i) {
    const SentryDevice& d = config.devices[i];
    if (auto named = CheckSandboxDeviceName(d.sandbox_name); !named)
      return Fail(EINVAL, "device {}: {}", i, named.error().reason);
    if (d.host_path.empty() || d.host_path[0] != '/')
      return Fail(EINVAL, "device {}: host path \"{}\" is not absolute", d.sandbox_name,
                  d.host_path);
    for (size_t k = 0; k < i; ++k)
      if (config.devices[k].sandbox_name == d.sandbox_name)
        return Fail(EINVAL, "device {} is configured twice", d.sandbox_name);
  }
  if (!config.rdma_cm_netns.empty() && config.rdma_cm_netns[0] != '/')
    return Fail(EINVAL, "rdma_cm network namespace path \"{}\" is not absolute",
                config.rdma_cm_netns);
  auto state = std::make_shared<State>(std::move(config));
  if (state->config.rdma_cm && !state->config.rdma_cm_netns.empty()) {
    auto netns = NetnsThread::Start(state->config.rdma_cm_netns);
    if (!netns) return std::move(netns).error();
    state->rdma_cm_netns = std::move(*netns);
  }
  return std::unique_ptr<Sentry>(new Sentry(std::move(state)));
}

const std::vector<SentryDevice>& Sentry::devices() const { return state_->config.devices; }
Engine& Sentry::engine() { return state_->engine; }

Result<std::shared_ptr<SentryFile>> Sentry::Open(std::string_view path, int flags) {
  auto missing = [&]() -> Error {
    auto e = Fail(ENOENT, "open {}: the sandbox has no such device", path);
    state_->engine.Log(fmt::format("rdmaproxy: {}", e.ToString()));
    return e;
  };
  if (!path.starts_with(kDeviceDir)) return missing();
  const std::string_view name = path.substr(kDeviceDir.size());
  // Flags that natively fail on a character device, or open no file that can carry a command.
  // The device's existence is checked first, as path lookup comes before them natively.
  auto refused = [&](int errnum, std::string_view why) -> Error {
    auto e = Fail(errnum, "open {}: {}", path, why);
    state_->engine.Log(fmt::format("rdmaproxy: {}", e.ToString()));
    return e;
  };
  const bool exists = (name == "rdma_cm" && state_->config.rdma_cm) ||
                      std::any_of(state_->config.devices.begin(), state_->config.devices.end(),
                                  [&](const SentryDevice& d) { return d.sandbox_name == name; });
  if (!exists) return missing();
  if ((flags & O_DIRECTORY) != 0)  // do_open(): a non-directory with O_DIRECTORY
    return refused(ENOTDIR, "O_DIRECTORY names a character device");
  if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))  // open_last_lookups(): it exists
    return refused(EEXIST, "O_CREAT | O_EXCL of a device that exists");
  if ((flags & O_PATH) == O_PATH)
    return refused(EINVAL, "O_PATH: a path-only fd carries no command; the runtime answers it "
                   "without the sentry");
  const int host_flags = flags & (O_ACCMODE | O_NONBLOCK);
  if (name == "rdma_cm") {
    if (!state_->config.rdma_cm) return missing();
    auto host = HostDeviceFile::Open(state_->config.rdma_cm_host_path, host_flags);
    if (!host) return std::move(host).error();
    return std::shared_ptr<SentryFile>(std::make_shared<CmSentryFile>(
        state_, flags & O_ACCMODE, std::move(*host), state_->engine.OpenRdmaCm("rdma_cm")));
  }
  for (const SentryDevice& d : state_->config.devices) {
    if (d.sandbox_name != name) continue;
    auto host = HostDeviceFile::Open(d.host_path, host_flags);
    if (!host) return std::move(host).error();
    return std::shared_ptr<SentryFile>(std::make_shared<UverbsSentryFile>(
        state_, flags & O_ACCMODE, std::move(*host),
        state_->engine.OpenUverbs(d.sandbox_name, d.driver_id)));
  }
  return missing();
}

}  // namespace rxp::proxy
