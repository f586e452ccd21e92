// The C API (rdmaproxy.h) over sentry.h: handles from CHandles, the runtime's callbacks
// adapted to AppMemory / SentryFdTable, errors as -errno plus a per-thread reason. Nothing
// thrown inside escapes: every entry point runs under Guard.
#include "rdmaproxy/rdmaproxy.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <string>

#include "abi/one_line.h"
#include "rdmaproxy/c_api_internal.h"
#include "rdmaproxy/device_map.h"
#include "rdmaproxy/host_rdma_devices.h"
#include "rdmaproxy/sentry.h"

namespace rxp::proxy::capi {

uint64_t CHandles::Add(Object object) {
  std::unique_lock lock(mutex_);
  const uint64_t token = next_;
  next_ += 16;
  objects_.emplace(token, std::move(object));
  return token;
}

namespace {

LineSink SinkOf(rxp_line_sink sink, void* context) {
  if (sink == nullptr) return {};
  return [sink, context](std::string_view line) { sink(context, std::string(line).c_str()); };
}

// A callback's result as an errno: its own for a -errno, `otherwise` for anything else the
// header does not allow (a positive number, or a negative one past the errno range, whose
// negation could overflow), so that such a result is a failure, never a success.
int CallbackErrno(int r, int otherwise) { return r < 0 && r >= -4095 ? -r : otherwise; }

// The runtime's memory callbacks as the engine's AppMemory: never identity-mapped.
class CallbackMemory final : public AppMemory {
 public:
  CallbackMemory(const rxp_app_ops& ops, void* app) : ops_(ops), app_(app) {}
  bool IdentityMapped() const override { return false; }
  Result<void> Read(uint64_t address, std::span<std::byte> out) override {
    if (const int r = ops_.read_memory(app_, address, out.data(), out.size()); r != 0)
      return Fail(CallbackErrno(r, EFAULT), "app memory [{:#x}, +{}) cannot be read", address,
                  out.size());
    return Ok();
  }
  Result<void> Write(uint64_t address, std::span<const std::byte> in) override {
    if (const int r = ops_.write_memory(app_, address, in.data(), in.size()); r != 0)
      return Fail(CallbackErrno(r, EFAULT), "app memory [{:#x}, +{}) cannot be written", address,
                  in.size());
    return Ok();
  }
  Result<uint64_t> HostAddress(uint64_t address, uint64_t length) override {
    uint64_t host = 0;
    if (const int r = ops_.host_address(app_, address, length, &host); r != 0)
      return Fail(CallbackErrno(r, EFAULT), "app memory [{:#x}, +{}) has no host mirror",
                  address, length);
    return host;
  }

 private:
  const rxp_app_ops& ops_;
  void* app_;
};

// The runtime's fd callbacks as the sentry's SentryFdTable. It refers to the calling file's
// sentry state, which that file keeps alive for the call (no reference count per command).
class CallbackFds final : public SentryFdTable {
 public:
  CallbackFds(const std::shared_ptr<SentryState>& sentry, void* app) : sentry_(sentry), app_(app) {}
  Result<AppFdTarget> Lookup(int app_fd) override {
    rxp_fd_target t{nullptr, -1, RXP_FILE_OTHER};
    if (const int r = sentry_->ops.resolve_fd(app_, app_fd, &t); r != 0)
      return Fail(CallbackErrno(r, EBADF), "app fd {} is not open", app_fd);
    if (t.file != nullptr) {
      auto f = FileOf(t.file);
      if (!f) return Fail(EBADF, "app fd {} resolves to a closed rxp_file", app_fd);
      return AppFdTarget{f->file, -1, FileKind::kOther};
    }
    if (t.kind != RXP_FILE_OTHER && t.kind != RXP_FILE_DMA_BUF)
      return Fail(EBADF, "app fd {}: a host fd of kind {} must be an rxp_file", app_fd, t.kind);
    return AppFdTarget{nullptr, t.host_fd, static_cast<FileKind>(t.kind)};
  }
  Result<int> Install(std::shared_ptr<SentryFile> file) override {
    auto& handles = CHandles::Instance();
    const uint64_t token = handles.Add(std::make_shared<FileState>(FileState{file, sentry_}));
    const int fd = sentry_->ops.install_fd(app_, HandleOf<rxp_file>(token));
    if (fd < 0) {
      handles.Remove<FileState>(token);
      Error e = Fail(CallbackErrno(fd, EMFILE),
                     "the runtime could not install the {} as an app fd (install_fd returned {})",
                     file->label(), fd);
      callback_failure = e;
      return e;
    }
    return fd;
  }

 private:
  const std::shared_ptr<SentryState>& sentry_;
  void* app_;
};

static_assert(static_cast<int>(FileKind::kOther) == RXP_FILE_OTHER &&
              static_cast<int>(FileKind::kUverbs) == RXP_FILE_UVERBS &&
              static_cast<int>(FileKind::kRdmaCm) == RXP_FILE_RDMA_CM &&
              static_cast<int>(FileKind::kAsyncEvent) == RXP_FILE_ASYNC_EVENT &&
              static_cast<int>(FileKind::kCompChannel) == RXP_FILE_COMP_CHANNEL &&
              static_cast<int>(FileKind::kDmaBuf) == RXP_FILE_DMA_BUF);

// huge_encode_dev() of include/linux/kdev_t.h, as RDMA_NLDEV_ATTR_CHARDEV carries it.
uint64_t HugeEncodeDev(dev_t dev) {
  const uint64_t ma = major(dev), mi = minor(dev);
  return (mi & 0xff) | (ma << 8) | ((mi & ~0xffull) << 12);
}

// The host device behind the device file at `path` (its driver id, its IB name), found over
// NETLINK_RDMA by its device number.
Result<HostRdmaDevice> HostDeviceOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Fail(errno, "{}: {}", path, std::strerror(errno));
  if (!S_ISCHR(st.st_mode)) return Fail(ENODEV, "{} is not a character device", path);
  auto devices = QueryHostRdmaDevices();
  if (!devices) return std::move(devices).error();
  for (const HostRdmaDevice& d : *devices)
    if (d.dev == HugeEncodeDev(st.st_rdev)) return d;
  return Fail(ENODEV, "{} is no uverbs device the host's RDMA netlink knows", path);
}

bool CompleteOps(const rxp_app_ops& o) {
  return o.read_memory != nullptr && o.write_memory != nullptr && o.host_address != nullptr &&
         o.resolve_fd != nullptr && o.install_fd != nullptr;
}

template <typename F>
long WithFile(rxp_file* handle, void* app, F&& op) {
  return Guard([&]() -> long {
    auto f = FileOf(handle);
    if (!f) return BadFile();
    CallbackMemory memory(f->sentry->ops, app);
    CallbackFds fds(f->sentry, app);
    AppContext context{memory, fds};
    (void)Engine::TakeLastRefusal();
    callback_failure.reset();
    const long r = op(*f->file, context);
    if (r < 0) {
      // A proxy refusal carries its reason, and so does the runtime's install_fd refusing the
      // new fd; anything else is the host kernel's answer.
      if (auto why = Engine::TakeLastRefusal()) {
        last_error = why->ToString();
      } else if (callback_failure) {
        last_error = callback_failure->ToString();
        kernel_errno = 0;
      } else {
        kernel_errno = static_cast<int>(-r);
        kernel_error_file.assign(f->file->label());
      }
    }
    return r;
  });
}

// Runs `edit` on a live config under its lock.
template <typename F>
int EditConfig(rxp_config* handle, F&& edit) {
  return Guard([&]() -> int {
    auto c = ConfigOf(handle);
    if (!c) return BadConfig();
    std::lock_guard lock(c->mutex);
    return edit(*c);
  });
}

// A policy replaces the previous one, its quotas included, but not the quotas set one by one
// (before or after it).
int SetPolicy(ConfigState& c, rxp::Result<PolicyConfig> policy) {
  if (!policy) return Failed(policy.error());
  c.config.policy = std::move(*policy);
  Quotas& q = c.config.policy.quotas;
  const Quotas& mine = c.set_one_by_one;
  if (mine.pinned_bytes) q.pinned_bytes = mine.pinned_bytes;
  for (auto field : {&Quotas::contexts, &Quotas::pds, &Quotas::cqs, &Quotas::qps,
                     &Quotas::srqs, &Quotas::mrs, &Quotas::mws, &Quotas::ahs, &Quotas::wqs,
                     &Quotas::dms, &Quotas::uars})
    if (mine.*field) q.*field = mine.*field;
  return 0;
}

}  // namespace
}  // namespace rxp::proxy::capi

using namespace rxp::proxy;
using namespace rxp::proxy::capi;

extern "C" {

const char* rxp_last_error(void) {
  if (kernel_errno != 0) {
    last_error = rxp::Error{kernel_errno, kernel_error_file + ": the host kernel's answer"}.ToString();
    kernel_errno = 0;
  }
  // One line, whatever the app or the config named (abi/one_line.h).
  if (rxp::HasControlBytes(last_error)) last_error = rxp::OneLine(last_error);
  return last_error.c_str();
}
int rxp_api_version(void) { return RXP_API_VERSION; }

int rxp_config_create(rxp_config** config) {
  return Guard([&] {
    if (config == nullptr) return Failed(EINVAL, "EINVAL: config is NULL");
    *config = HandleOf<rxp_config>(CHandles::Instance().Add(std::make_shared<ConfigState>()));
    return 0;
  });
}

int rxp_config_destroy(rxp_config* config) {
  return Guard([&] {
    return CHandles::Instance().Remove<ConfigState>(Token(config)) ? 0 : BadConfig();
  });
}

int rxp_config_set_app_ops(rxp_config* config, const rxp_app_ops* ops) {
  return EditConfig(config, [&](ConfigState& c) {
    if (ops == nullptr || ops->size < sizeof(rxp_app_ops))
      return Failed(EINVAL, "EINVAL: rxp_app_ops is NULL or its size is too small");
    if (!CompleteOps(*ops))
      return Failed(EINVAL, "EINVAL: every rxp_app_ops callback is required");
    c.ops = *ops;
    c.ops.size = sizeof(rxp_app_ops);
    c.has_ops = true;
    return 0;
  });
}

int rxp_config_add_device(rxp_config* config, const char* sandbox_name, const char* host_path,
                          int64_t driver_id) {
  return EditConfig(config, [&](ConfigState& c) {
    if (sandbox_name == nullptr || host_path == nullptr)
      return Failed(EINVAL, "EINVAL: device names must not be NULL");
    if (driver_id < -1 || driver_id > UINT32_MAX)
      return Failed(EINVAL, "EINVAL: driver_id must be -1 or an enum rdma_driver_id");
    SentryDevice d{sandbox_name, host_path, 0, {}};
    if (auto named = CheckSandboxDeviceName(d.sandbox_name); !named) return Failed(named.error());
    if (d.sandbox_name.size() >= sizeof(rxp_device_info::sandbox_name))
      return Failed(ENAMETOOLONG, fmt::format("ENAMETOOLONG: device name \"{}\"", d.sandbox_name));
    if (d.host_path.empty() || d.host_path[0] != '/')
      return Failed(EINVAL, fmt::format("EINVAL: host path \"{}\" is not absolute", d.host_path));
    if (d.host_path.size() >= sizeof(rxp_device_info::host_path))
      return Failed(ENAMETOOLONG, fmt::format("ENAMETOOLONG: host path \"{}\"", d.host_path));
    for (const auto& have : c.config.devices)
      if (have.sandbox_name == d.sandbox_name)
        return Failed(EEXIST, fmt::format("EEXIST: device {} is already configured",
                                          d.sandbox_name));
    if (driver_id >= 0) {
      d.driver_id = static_cast<uint32_t>(driver_id);
    } else {
      auto host = HostDeviceOf(d.host_path);
      if (!host) return Failed(host.error());
      d.driver_id = host->driver_id;
      d.ibdev = host->ibdev;
    }
    c.config.devices.push_back(std::move(d));
    return 0;
  });
}

int rxp_config_select_devices(rxp_config* config, const char* spec) {
  return EditConfig(config, [&](ConfigState& c) {
    if (spec == nullptr) return Failed(EINVAL, "EINVAL: device list is NULL");
    auto host = QueryHostRdmaDevices();
    if (!host) return Failed(host.error());
    auto mappings = ParseDeviceList(spec, *host);
    if (!mappings) return Failed(mappings.error());
    std::vector<SentryDevice> added = c.config.devices;
    for (const DeviceMapping& m : *mappings) {
      for (const auto& have : added)
        if (have.sandbox_name == m.sandbox_uverbs)
          return Failed(EEXIST, fmt::format("EEXIST: device {} is already configured",
                                            m.sandbox_uverbs));
      added.push_back({m.sandbox_uverbs, "/dev/infiniband/" + m.host.uverbs, m.host.driver_id,
                       m.host.ibdev});
    }
    c.config.devices = std::move(added);
    return 0;
  });
}

int rxp_config_set_rdma_cm(rxp_config* config, int enabled) {
  return EditConfig(config, [&](ConfigState& c) {
    c.config.rdma_cm = enabled != 0;
    return 0;
  });
}

int rxp_config_set_rdma_cm_netns(rxp_config* config, const char* path) {
  return EditConfig(config, [&](ConfigState& c) {
    if (path != nullptr && path[0] != '\0' && path[0] != '/')
      return Failed(EINVAL, fmt::format("EINVAL: network namespace path \"{}\" is not absolute",
                                        path));
    c.config.rdma_cm_netns = path != nullptr ? path : "";
    return 0;
  });
}

int rxp_config_set_policy_json(rxp_config* config, const char* json) {
  return EditConfig(config, [&](ConfigState& c) {
    if (json == nullptr) return Failed(EINVAL, "EINVAL: policy text is NULL");
    return SetPolicy(c, PolicyConfig::FromJson(json));
  });
}

int rxp_config_load_policy(rxp_config* config, const char* path) {
  return EditConfig(config, [&](ConfigState& c) {
    if (path == nullptr) return Failed(EINVAL, "EINVAL: policy path is NULL");
    return SetPolicy(c, PolicyConfig::FromFile(path));
  });
}

int rxp_config_set_quota(rxp_config* config, const char* name, uint64_t value) {
  return EditConfig(config, [&](ConfigState& c) {
    if (name == nullptr) return Failed(EINVAL, "EINVAL: quota name is NULL");
    if (auto r = c.set_one_by_one.Set(name, value); !r) return Failed(r.error());
    (void)c.config.policy.quotas.Set(name, value);
    return 0;
  });
}

int rxp_config_set_log(rxp_config* config, rxp_line_sink sink, void* context) {
  return EditConfig(config, [&](ConfigState& c) {
    c.config.log = SinkOf(sink, context);
    return 0;
  });
}

int rxp_config_set_trace(rxp_config* config, rxp_line_sink sink, void* context) {
  return EditConfig(config, [&](ConfigState& c) {
    c.config.trace = SinkOf(sink, context);
    return 0;
  });
}

int rxp_sentry_create(const rxp_config* config, rxp_sentry** sentry) {
  return Guard([&]() -> int {
    auto c = ConfigOf(config);
    if (!c) return BadConfig();
    if (sentry == nullptr) return Failed(EINVAL, "EINVAL: sentry is NULL");
    std::lock_guard lock(c->mutex);
    if (!c->has_ops)
      return Failed(EINVAL, "EINVAL: the config has no rxp_app_ops (rxp_config_set_app_ops)");
    auto made = Sentry::Create(c->config);
    if (!made) return Failed(made.error());
    auto state = std::make_shared<SentryState>(SentryState{std::move(*made), c->ops});
    *sentry = HandleOf<rxp_sentry>(CHandles::Instance().Add(std::move(state)));
    return 0;
  });
}

int rxp_sentry_destroy(rxp_sentry* sentry) {
  return Guard([&] {
    return CHandles::Instance().Remove<SentryState>(Token(sentry)) ? 0 : BadSentry();
  });
}

int rxp_sentry_stats(rxp_sentry* sentry, rxp_stats* stats) {
  return Guard([&]() -> int {
    auto s = SentryOf(sentry);
    if (!s) return BadSentry();
    if (stats == nullptr) return Failed(EINVAL, "EINVAL: stats is NULL");
    const Counters& k = s->sentry->engine().counters();
    *stats = rxp_stats{k.commands,       k.forwarded,     k.refused_decode,
                       k.refused_policy, k.refused_quota, k.refused_state,
                       k.kernel_errors,  k.mmaps,         s->sentry->engine().usage().pinned_bytes()};
    return 0;
  });
}

int rxp_sentry_device(rxp_sentry* sentry, unsigned index, rxp_device_info* info) {
  return Guard([&]() -> int {
    auto s = SentryOf(sentry);
    if (!s) return BadSentry();
    if (info == nullptr) return Failed(EINVAL, "EINVAL: info is NULL");
    const auto& devices = s->sentry->devices();
    if (index >= devices.size())
      return Failed(ENOENT, fmt::format("ENOENT: the sentry has {} devices", devices.size()));
    const SentryDevice& d = devices[index];
    struct stat st {};
    // -ENOENT says "past the last device" (enumeration stops there): a device whose host node
    // is missing or is not a device node is -ENODEV.
    if (::stat(d.host_path.c_str(), &st) != 0)
      return Failed(ENODEV, fmt::format("ENODEV: {} (device {}): {}", d.host_path, d.sandbox_name,
                                        std::strerror(errno)));
    if (!S_ISCHR(st.st_mode))
      return Failed(ENODEV, fmt::format("ENODEV: {} (device {}) is not a character device",
                                        d.host_path, d.sandbox_name));
    rxp_device_info out{};
    // Names were checked at configuration: device names are short, host paths absolute.
    auto copy = [](char* to, size_t size, const std::string& from) {
      from.copy(to, size - 1);
    };
    copy(out.sandbox_name, sizeof(out.sandbox_name), d.sandbox_name);
    copy(out.host_path, sizeof(out.host_path), d.host_path);
    copy(out.ibdev, sizeof(out.ibdev), d.ibdev);
    out.driver_id = d.driver_id;
    out.dev_major = major(st.st_rdev);
    out.dev_minor = minor(st.st_rdev);
    *info = out;
    return 0;
  });
}

int rxp_open(rxp_sentry* sentry, const char* path, int flags, rxp_file** file) {
  return Guard([&]() -> int {
    auto s = SentryOf(sentry);
    if (!s) return BadSentry();
    if (path == nullptr || file == nullptr) return Failed(EINVAL, "EINVAL: path or file is NULL");
    auto opened = s->sentry->Open(path, flags);
    if (!opened) return Failed(opened.error());
    *file = HandleOf<rxp_file>(
        CHandles::Instance().Add(std::make_shared<FileState>(FileState{std::move(*opened), s})));
    return 0;
  });
}

int rxp_file_dup(rxp_file* file, rxp_file** copy) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    if (copy == nullptr) return Failed(EINVAL, "EINVAL: copy is NULL");
    *copy = HandleOf<rxp_file>(CHandles::Instance().Add(std::make_shared<FileState>(*f)));
    return 0;
  });
}

int rxp_close(rxp_file* file) {
  return Guard([&] { return CHandles::Instance().Remove<FileState>(Token(file)) ? 0 : BadFile(); });
}

int rxp_file_kind(rxp_file* file) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    return f ? static_cast<int>(f->file->kind()) : BadFile();
  });
}

int rxp_file_host_fd(rxp_file* file) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    return f ? f->file->host_fd() : BadFile();
  });
}

long rxp_ioctl(rxp_file* file, void* app, unsigned long request, uint64_t arg) {
  return WithFile(file, app, [&](SentryFile& f, AppContext& c) { return f.Ioctl(c, request, arg); });
}

long rxp_write(rxp_file* file, void* app, uint64_t buffer, uint64_t length) {
  return WithFile(file, app,
                  [&](SentryFile& f, AppContext& c) { return f.Write(c, buffer, length); });
}

long rxp_read(rxp_file* file, void* app, uint64_t buffer, uint64_t length) {
  return WithFile(file, app,
                  [&](SentryFile& f, AppContext& c) { return f.Read(c, buffer, length); });
}

int rxp_poll(rxp_file* file, short events, short* revents) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    if (revents == nullptr) return Failed(EINVAL, "EINVAL: revents is NULL");
    auto r = f->file->Poll(events);
    if (!r) return Failed(r.error());
    *revents = *r;
    return 0;
  });
}

int rxp_set_nonblocking(rxp_file* file, int nonblocking) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    auto r = f->file->SetNonblocking(nonblocking != 0);
    return r ? 0 : Failed(r.error());
  });
}

int rxp_mmap(rxp_file* file, uint64_t length, int prot, int flags, uint64_t offset,
             void** address) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    if (address == nullptr) return Failed(EINVAL, "EINVAL: address is NULL");
    auto r = f->file->Mmap(length, prot, flags, offset);
    if (!r) return Failed(r.error());
    *address = *r;
    return 0;
  });
}

int rxp_mmap_prepare(rxp_file* file, uint64_t offset, uint64_t length, int prot, int* host_fd) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    if (host_fd == nullptr) return Failed(EINVAL, "EINVAL: host_fd is NULL");
    auto r = f->file->PrepareMmap(offset, length, prot);
    if (!r) return Failed(r.error());
    *host_fd = r->host_fd;
    return 0;
  });
}

int rxp_mmap_commit(rxp_file* file, uint64_t offset) {
  return Guard([&]() -> int {
    auto f = FileOf(file);
    if (!f) return BadFile();
    if (auto r = f->file->CommitMmap(offset); !r) return Failed(r.error());
    return 0;
  });
}

}  // extern "C"
