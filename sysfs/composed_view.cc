#include "sysfs/composed_view.h"

#include <vector>

#include "sysfs/names.h"

namespace rxp::sysfs {
namespace {

constexpr int kMaxSymlinks = 40;  // MAXSYMLINKS, counted across both trees

std::string Join(const std::vector<std::string_view>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) {
    out += '/';
    out += parts[i];
  }
  return out;
}

std::string Parent(std::string_view path) { return std::string(path.substr(0, path.rfind('/'))); }

}  // namespace

Result<ComposedView::Target> ComposedView::Locate(std::string_view view_path, bool follow_last) const {
  std::string path = std::string(Tree::kMountPoint) + (view_path.starts_with('/') ? "" : "/") + std::string(view_path);
  bool trailing_slash = path.size() > 1 && path.back() == '/';
  int links = 0;
  for (;;) {
    auto r = vfs_.Resolve(path, follow_last);
    if (!r) return std::move(r).error();
    if (!r->passthrough) return Target{false, r->node, {}};
    // On the host, below the passthrough point r->host_dir ("/sys/devices/system/cpu").
    std::string host = r->host_dir;
    std::vector<std::string_view> rest = PathComponents(r->rest);
    std::string restart;
    for (size_t i = 0; i < rest.size() && restart.empty(); ++i) {
      std::string_view c = rest[i];
      bool last = i + 1 == rest.size();
      if (c == ".") continue;
      if (c == "..") {
        if (host == r->host_dir) {  // leaving the passthrough directory: back to the tree
          restart = Parent(host) + Join(rest, i + 1);
        } else {
          host = Parent(host);
        }
        continue;
      }
      std::string next = host + "/" + std::string(c);
      auto kind = host_.Kind(next.substr(Tree::kMountPoint.size()), false);
      if (!kind) return std::move(kind).error();
      if (*kind == FileKind::kSymlink && (!last || follow_last || trailing_slash)) {
        if (++links > kMaxSymlinks) return Fail(ELOOP, "too many levels of symbolic links");
        auto target = host_.ReadLink(next.substr(Tree::kMountPoint.size()));
        if (!target) return std::move(target).error();
        // Host links are relative (sysfs); an absolute one is taken as it reads.
        restart = (target->starts_with('/') ? *target : host + "/" + *target) + Join(rest, i + 1);
        continue;
      }
      if (!last && *kind != FileKind::kDir) return Fail(ENOTDIR, "{} is not a directory", next);
      host = next;
    }
    if (restart.empty()) return Target{true, Tree::kRoot, host.substr(Tree::kMountPoint.size())};
    path = restart;
    if (!path.starts_with("/sys/") && path != "/sys") return Fail(EXDEV, "{} leads out of /sys", Quote(path));
  }
}

Result<std::string> ComposedView::ReadFile(std::string_view path, size_t max_bytes) const {
  auto t = Locate(path, true);
  if (!t) return std::move(t).error();
  if (t->on_host) return host_.ReadFile(t->host_path, max_bytes);
  auto data = vfs_.ReadAll(vfs_.tree().PathOf(t->node));
  if (data && data->size() > max_bytes) data->resize(max_bytes);
  return data;
}

Result<std::vector<std::string>> ComposedView::ListDir(std::string_view path) const {
  auto t = Locate(path, true);
  if (!t) return std::move(t).error();
  if (t->on_host) return host_.ListDir(t->host_path);
  auto entries = vfs_.ReadDir(vfs_.tree().PathOf(t->node));
  if (!entries) return std::move(entries).error();
  std::vector<std::string> names;
  for (const auto& e : *entries) names.emplace_back(e.name);
  return names;
}

Result<std::string> ComposedView::ReadLink(std::string_view path) const {
  auto t = Locate(path, false);
  if (!t) return std::move(t).error();
  if (t->on_host) return host_.ReadLink(t->host_path);
  return vfs_.ReadLink(vfs_.tree().PathOf(t->node));
}

Result<std::string> ComposedView::RealPath(std::string_view path) const {
  auto t = Locate(path, true);
  if (!t) return std::move(t).error();
  if (t->on_host) return t->host_path;
  std::string real = vfs_.tree().PathOf(t->node).substr(Tree::kMountPoint.size());
  return real.empty() ? std::string("/") : real;
}

Result<FileKind> ComposedView::Kind(std::string_view path, bool follow) const {
  auto t = Locate(path, follow);
  if (!t) return std::move(t).error();
  if (t->on_host) return host_.Kind(t->host_path, false);
  return FileKindOf(vfs_.tree().node(t->node).kind);
}

}  // namespace rxp::sysfs
