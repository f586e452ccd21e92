// The C API's /sys (rdmaproxy.h, "the app's /sys"): a host snapshot narrowed by sysfs::Select
// to the sentry's devices under their sandbox uverbs names, synthesized once, then served
// through sysfs::SysfsVfs. This file is the one place the embedding API meets sysfs/: the
// engine itself never depends on it.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rdmaproxy/c_api_internal.h"
#include "sysfs/composed_view.h"
#include "sysfs/disk_fs.h"
#include "sysfs/materialize.h"
#include "sysfs/select.h"
#include "sysfs/snapshot_schema.h"
#include "sysfs/synthesize.h"
#include "sysfs/vfs.h"

namespace rxp::proxy::capi {

namespace {

// The host's /sys when it cannot be opened: every path below a passthrough point fails with
// the reason.
class UnavailableHost final : public sysfs::FsView {
 public:
  explicit UnavailableHost(Error why) : why_(std::move(why)) {}
  Result<std::string> ReadFile(std::string_view, size_t) const override { return why_; }
  Result<std::vector<std::string>> ListDir(std::string_view) const override { return why_; }
  Result<std::string> ReadLink(std::string_view) const override { return why_; }
  Result<std::string> RealPath(std::string_view) const override { return why_; }
  Result<sysfs::FileKind> Kind(std::string_view, bool) const override { return why_; }

 private:
  Error why_;
};

}  // namespace

struct SysfsState {
  explicit SysfsState(std::shared_ptr<const sysfs::Tree> t) : tree(std::move(t)), vfs(tree) {}

  // Where a path that reached a passthrough point ends: resolved the way the kernel resolves
  // one tree made of the synthesized one and the host's directories at the passthrough points
  // (sysfs::ComposedView::Locate). A ".." or a host symlink that leads out of the passthrough
  // directory starts over in the synthesized tree, so it reaches neither a host file outside
  // the passthrough directories nor a part of /sys the tree hides. The host's /sys is opened
  // at the first such path, once (an rxp_sysfs that never meets one holds no fd).
  Result<sysfs::ComposedView::Target> Locate(std::string_view path, bool follow) const {
    std::call_once(host_once, [this] {
      auto disk = sysfs::DiskFs::Open("/sys");
      if (disk)
        host.emplace(std::move(*disk));
      else
        unavailable.emplace(std::move(disk).error());
    });
    const sysfs::FsView& h = host ? static_cast<const sysfs::FsView&>(*host) : *unavailable;
    return sysfs::ComposedView(vfs, h).Locate(path.substr(sysfs::Tree::kMountPoint.size()),
                                              follow);
  }

  std::shared_ptr<const sysfs::Tree> tree;
  sysfs::SysfsVfs vfs;

 private:
  mutable std::once_flag host_once;
  mutable std::optional<sysfs::DiskFs> host;
  mutable std::optional<UnavailableHost> unavailable;
};

namespace {

std::shared_ptr<SysfsState> SysfsOf(rxp_sysfs* s) {
  return CHandles::Instance().Get<SysfsState>(Token(s));
}
int BadSysfs() { return Failed(EINVAL, "EINVAL: not a live rxp_sysfs handle"); }

// The snapshot's RDMA device behind a sentry device: by IB name when the host's netlink gave
// one, else by the host uverbs node the device file is (its name before any renumbering).
Result<std::string> SnapshotDeviceOf(const sysfs::Snapshot& snapshot, const SentryDevice& d) {
  if (!d.ibdev.empty()) {
    if (snapshot.FindRdma(d.ibdev) == nullptr)
      return Fail(ENODEV, "device {} ({}) is not in the snapshot", d.sandbox_name, d.ibdev);
    return d.ibdev;
  }
  const std::string node = d.host_path.substr(d.host_path.rfind('/') + 1);
  for (const sysfs::RdmaDevice& r : snapshot.rdma_devices) {
    if (!r.uverbs) continue;
    if (r.uverbs->host_name.value_or(r.uverbs->name) == node) return r.name;
  }
  return Fail(ENODEV, "device {} ({}): no RDMA device of the snapshot has uverbs node {}",
              d.sandbox_name, d.host_path, node);
}

// The sandbox's snapshot: the sentry's devices only, each uverbs node renamed as the sentry
// serves it (the same rule as `rdmaproxy run --sysfs`).
Result<sysfs::Snapshot> SandboxSnapshot(const sysfs::Snapshot& host,
                                        const std::vector<SentryDevice>& devices) {
  sysfs::SelectOptions options;
  options.devices.emplace();
  options.uverbs_names.emplace();
  for (const SentryDevice& d : devices) {
    auto name = SnapshotDeviceOf(host, d);
    if (!name) return std::move(name).error();
    if (std::find(options.devices->begin(), options.devices->end(), *name) !=
        options.devices->end())
      return Fail(EINVAL, "host device {} is configured twice", *name);
    options.devices->push_back(*name);
    (*options.uverbs_names)[*name] = d.sandbox_name;
  }
  return sysfs::Select(host, options);
}

template <typename F>
auto WithSysfs(rxp_sysfs* handle, const char* path, F&& op) -> decltype(op(*SysfsOf(handle))) {
  return Guard([&]() -> decltype(op(*SysfsOf(handle))) {
    auto s = SysfsOf(handle);
    if (!s) return BadSysfs();
    if (path == nullptr) return Failed(EINVAL, "EINVAL: path is NULL");
    return op(*s);
  });
}

// `op` on `path` in the synthesized tree; when the tree alone reaches a passthrough point
// (EXDEV), on where the path really ends (SysfsState::Locate): the tree's own path of that
// node, or EXDEV when it ends on the host.
template <typename Op>
auto InTree(const SysfsState& s, std::string_view path, bool follow, Op&& op)
    -> decltype(op(path)) {
  auto r = op(path);
  if (r || r.error().errnum != EXDEV) return r;
  auto target = s.Locate(path, follow);
  if (!target) return std::move(target).error();
  if (target->on_host) return r;
  return op(s.vfs.tree().PathOf(target->node));
}

uint32_t TypeBits(sysfs::NodeKind kind) {
  switch (sysfs::FileKindOf(kind)) {
    case sysfs::FileKind::kDir: return S_IFDIR;
    case sysfs::FileKind::kSymlink: return S_IFLNK;
    default: return S_IFREG;
  }
}

}  // namespace
}  // namespace rxp::proxy::capi

using namespace rxp::proxy;
using namespace rxp::proxy::capi;

extern "C" {

int rxp_sysfs_create(rxp_sentry* sentry, const char* snapshot_json, rxp_sysfs** sysfs_out) {
  return Guard([&]() -> int {
    auto s = SentryOf(sentry);
    if (!s) return BadSentry();
    if (snapshot_json == nullptr || sysfs_out == nullptr)
      return Failed(EINVAL, "EINVAL: snapshot or sysfs is NULL");
    auto host = rxp::sysfs::ParseSnapshot(snapshot_json);
    if (!host) return Failed(host.error());
    auto sandbox = SandboxSnapshot(*host, s->sentry->devices());
    if (!sandbox) return Failed(sandbox.error());
    auto tree = rxp::sysfs::Synthesize(*sandbox);
    if (!tree) return Failed(tree.error());
    auto shared = std::make_shared<const rxp::sysfs::Tree>(std::move(*tree));
    auto state = std::make_shared<SysfsState>(std::move(shared));
    *sysfs_out = HandleOf<rxp_sysfs>(CHandles::Instance().Add(std::move(state)));
    return 0;
  });
}

int rxp_sysfs_destroy(rxp_sysfs* sysfs) {
  return Guard([&] {
    return CHandles::Instance().Remove<SysfsState>(Token(sysfs)) ? 0 : BadSysfs();
  });
}

int rxp_sysfs_resolve(rxp_sysfs* sysfs, const char* path, int follow, char* host_path,
                      size_t host_path_size) {
  return WithSysfs(sysfs, path, [&](SysfsState& s) -> int {
    auto found = s.vfs.Resolve(path, follow != 0);
    if (!found) return Failed(found.error());
    if (!found->passthrough) return RXP_SYSFS_SYNTHESIZED;
    auto target = s.Locate(path, follow != 0);
    if (!target) return Failed(target.error());
    if (!target->on_host) return RXP_SYSFS_SYNTHESIZED;
    const std::string host = std::string(rxp::sysfs::Tree::kMountPoint) + target->host_path;
    if (host_path == nullptr || host_path_size <= host.size())
      return Failed(ENAMETOOLONG, fmt::format("ENAMETOOLONG: host path {} needs {} bytes", host,
                                              host.size() + 1));
    std::memcpy(host_path, host.c_str(), host.size() + 1);
    return RXP_SYSFS_HOST;
  });
}

int rxp_sysfs_stat(rxp_sysfs* sysfs, const char* path, int follow, rxp_sysfs_statbuf* st) {
  return WithSysfs(sysfs, path, [&](SysfsState& s) -> int {
    if (st == nullptr) return Failed(EINVAL, "EINVAL: st is NULL");
    auto r = InTree(s, path, follow != 0, [&](std::string_view p) {
      return follow != 0 ? s.vfs.Stat(p) : s.vfs.Lstat(p);
    });
    if (!r) return Failed(r.error());
    *st = rxp_sysfs_statbuf{r->mode, r->size, r->ino};
    return 0;
  });
}

long rxp_sysfs_readlink(rxp_sysfs* sysfs, const char* path, char* buffer, size_t size) {
  return WithSysfs(sysfs, path, [&](SysfsState& s) -> long {
    // readlink(2): a size of 0 is EINVAL.
    if (size == 0) return Failed(EINVAL, "EINVAL: size is 0");
    if (buffer == nullptr) return Failed(EINVAL, "EINVAL: buffer is NULL");
    auto r = InTree(s, path, false, [&](std::string_view p) { return s.vfs.ReadLink(p); });
    if (!r) return Failed(r.error());
    const size_t n = std::min(size, r->size());
    std::memcpy(buffer, r->data(), n);
    return static_cast<long>(n);
  });
}

long rxp_sysfs_read(rxp_sysfs* sysfs, const char* path, uint64_t offset, void* buffer,
                    size_t size) {
  return WithSysfs(sysfs, path, [&](SysfsState& s) -> long {
    if (buffer == nullptr && size != 0) return Failed(EINVAL, "EINVAL: buffer is NULL");
    auto r = InTree(s, path, true, [&](std::string_view p) {
      return s.vfs.Read(p, offset, std::span(static_cast<char*>(buffer), size));
    });
    if (!r) return Failed(r.error());
    return static_cast<long>(*r);
  });
}

int rxp_sysfs_readdir(rxp_sysfs* sysfs, const char* path, rxp_sysfs_dirent entry,
                      void* context) {
  return WithSysfs(sysfs, path, [&](SysfsState& s) -> int {
    if (entry == nullptr) return Failed(EINVAL, "EINVAL: entry is NULL");
    auto r = InTree(s, path, true, [&](std::string_view p) { return s.vfs.ReadDir(p); });
    if (!r) return Failed(r.error());
    std::string name;
    for (const rxp::sysfs::VfsDirEntry& e : *r) {
      name.assign(e.name);
      if (const int stop = entry(context, name.c_str(), TypeBits(e.kind), e.ino); stop != 0)
        return stop;
    }
    return 0;
  });
}

int rxp_sysfs_materialize(rxp_sysfs* sysfs, const char* dir) {
  return WithSysfs(sysfs, dir, [&](SysfsState& s) -> int {
    auto r = rxp::sysfs::Materialize(*s.tree, dir);
    return r ? 0 : Failed(r.error());
  });
}

}  // extern "C"
