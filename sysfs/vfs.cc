#include "sysfs/vfs.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "sysfs/names.h"

namespace rxp::sysfs {
namespace {

constexpr size_t kPathMax = 4096;  // PATH_MAX
constexpr size_t kNameMax = 255;   // NAME_MAX
constexpr int kMaxSymlinks = 40;   // MAXSYMLINKS (fs/namei.c)

bool OnlySlashes(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '/'; });
}

}  // namespace

SysfsVfs::SysfsVfs(std::shared_ptr<const Tree> tree) : tree_(std::move(tree)) {}

Result<Lookup> SysfsVfs::Resolve(std::string_view path, bool follow_last) const {
  const Tree& t = *tree_;
  if (path.size() >= kPathMax) return Fail(ENAMETOOLONG, "path of {} bytes", path.size());
  constexpr std::string_view kMount = Tree::kMountPoint;
  if (!path.starts_with(kMount) || (path.size() > kMount.size() && path[kMount.size()] != '/'))
    return Fail(EINVAL, "{} is not below {}", Quote(path), kMount);

  // Pending path text, innermost symlink target on top. Views point into `path` or into
  // the tree's link targets, both stable: resolution allocates nothing.
  std::array<std::string_view, kMaxSymlinks + 2> stack;
  size_t depth = 0;
  stack[depth++] = path.substr(kMount.size());
  int links = 0;
  NodeId cur = Tree::kRoot;
  while (depth > 0) {
    std::string_view& top = stack[depth - 1];
    size_t start = top.find_first_not_of('/');
    if (start == std::string_view::npos) {
      --depth;
      continue;
    }
    top.remove_prefix(start);
    size_t slash = top.find('/');
    std::string_view comp = top.substr(0, slash);
    top = slash == std::string_view::npos ? std::string_view() : top.substr(slash);
    if (comp.size() > kNameMax) return Fail(ENAMETOOLONG, "component of {} bytes", comp.size());
    // Last component of the whole walk? A trailing slash after it demands a directory.
    bool last = true, trailing_slash = false;
    for (size_t i = depth; i-- > 0;) {
      if (!OnlySlashes(stack[i])) {
        last = false;
        break;
      }
      trailing_slash |= !stack[i].empty();
    }
    trailing_slash &= last;
    if (comp == ".") continue;
    if (comp == "..") {
      cur = t.node(cur).parent;  // the root's parent is the root
      continue;
    }
    const Node& dir = t.node(cur);
    if (dir.kind != NodeKind::kDir) return Fail(ENOTDIR, "{} is not a directory", t.PathOf(cur));
    auto child = t.Child(cur, comp);
    if (!child) return Fail(ENOENT, "{} does not exist in {}", Quote(comp), t.PathOf(cur));
    const Node& n = t.node(*child);
    if (n.kind == NodeKind::kSymlink && (!last || follow_last || trailing_slash)) {
      if (++links > kMaxSymlinks) return Fail(ELOOP, "too many levels of symbolic links");
      stack[depth++] = n.data;  // relative to `cur`, the link's directory
      continue;
    }
    if (n.kind == NodeKind::kPassthrough) {
      Lookup out;
      out.node = *child;
      out.passthrough = true;
      out.host_dir = t.PathOf(*child);
      for (size_t i = depth; i-- > 0;) {
        std::string_view seg = stack[i];
        size_t s0 = seg.find_first_not_of('/');
        if (s0 == std::string_view::npos) continue;
        if (!out.rest.empty()) out.rest += '/';
        out.rest += seg.substr(s0);
      }
      return out;
    }
    cur = *child;
    if (trailing_slash && n.kind != NodeKind::kDir)
      return Fail(ENOTDIR, "{} is not a directory", t.PathOf(cur));
  }
  Lookup out;
  out.node = cur;
  return out;
}

Result<NodeId> SysfsVfs::ResolveLocal(std::string_view path, bool follow_last) const {
  auto r = Resolve(path, follow_last);
  if (!r) return std::move(r).error();
  if (r->passthrough)
    return Fail(EXDEV, "{} is passed through to the host ({})", Quote(path), r->host_dir);
  return r->node;
}

VfsStat SysfsVfs::StatOf(NodeId id) const {
  const Node& n = tree_->node(id);
  VfsStat st;
  st.kind = n.kind;
  st.ino = uint64_t{id} + 1;
  switch (n.kind) {
    case NodeKind::kDir:
    case NodeKind::kPassthrough: st.mode = S_IFDIR | n.mode; break;
    case NodeKind::kFile:
      st.mode = S_IFREG | n.mode;
      st.size = 4096;  // sysfs_init_inode(): attributes report PAGE_SIZE
      break;
    case NodeKind::kSymlink: st.mode = S_IFLNK | n.mode; break;
  }
  return st;
}

Result<VfsStat> SysfsVfs::Stat(std::string_view path) const {
  auto id = ResolveLocal(path, true);
  if (!id) return std::move(id).error();
  return StatOf(*id);
}

Result<VfsStat> SysfsVfs::Lstat(std::string_view path) const {
  auto id = ResolveLocal(path, false);
  if (!id) return std::move(id).error();
  return StatOf(*id);
}

Result<std::string> SysfsVfs::ReadLink(std::string_view path) const {
  auto id = ResolveLocal(path, false);
  if (!id) return std::move(id).error();
  const Node& n = tree_->node(*id);
  if (n.kind != NodeKind::kSymlink) return Fail(EINVAL, "{} is not a symbolic link", Quote(path));
  return n.data;
}

Result<size_t> SysfsVfs::Read(std::string_view path, uint64_t offset, std::span<char> buf) const {
  auto id = ResolveLocal(path, true);
  if (!id) return std::move(id).error();
  const Node& n = tree_->node(*id);
  if (n.kind == NodeKind::kDir) return Fail(EISDIR, "{} is a directory", Quote(path));
  if (n.read_fails) return Fail(EINVAL, "reading {} fails in the kernel too", Quote(path));
  if (offset >= n.data.size()) return size_t{0};
  size_t count = std::min(buf.size(), n.data.size() - static_cast<size_t>(offset));
  std::memcpy(buf.data(), n.data.data() + offset, count);
  return count;
}

Result<std::string> SysfsVfs::ReadAll(std::string_view path) const {
  auto id = ResolveLocal(path, true);
  if (!id) return std::move(id).error();
  const Node& n = tree_->node(*id);
  if (n.kind == NodeKind::kDir) return Fail(EISDIR, "{} is a directory", Quote(path));
  if (n.read_fails) return Fail(EINVAL, "reading {} fails in the kernel too", Quote(path));
  return n.data;
}

Result<std::vector<VfsDirEntry>> SysfsVfs::ReadDir(std::string_view path) const {
  auto id = ResolveLocal(path, true);
  if (!id) return std::move(id).error();
  if (tree_->node(*id).kind != NodeKind::kDir) return Fail(ENOTDIR, "{} is not a directory", Quote(path));
  std::vector<VfsDirEntry> out;
  auto children = tree_->Children(*id);
  out.reserve(children.size());
  for (NodeId c : children) {
    const Node& n = tree_->node(c);
    out.push_back(VfsDirEntry{n.name, n.kind, uint64_t{c} + 1});
  }
  return out;
}

Result<std::string> SysfsVfs::RealPath(std::string_view path) const {
  auto id = ResolveLocal(path, true);
  if (!id) return std::move(id).error();
  return tree_->PathOf(*id);
}

std::string VfsView::Full(std::string_view path) const {
  std::string full(Tree::kMountPoint);
  if (!path.empty() && path.front() != '/') full += '/';
  full += path;
  return full;
}

Result<std::string> VfsView::ReadFile(std::string_view path, size_t max_bytes) const {
  auto data = vfs_.ReadAll(Full(path));
  if (data && data->size() > max_bytes) data->resize(max_bytes);
  return data;
}

Result<std::vector<std::string>> VfsView::ListDir(std::string_view path) const {
  auto entries = vfs_.ReadDir(Full(path));
  if (!entries) return std::move(entries).error();
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (const auto& e : *entries) names.emplace_back(e.name);
  return names;
}

Result<std::string> VfsView::ReadLink(std::string_view path) const { return vfs_.ReadLink(Full(path)); }

Result<std::string> VfsView::RealPath(std::string_view path) const {
  auto real = vfs_.RealPath(Full(path));
  if (!real) return std::move(real).error();
  std::string rel = real->substr(Tree::kMountPoint.size());
  return rel.empty() ? std::string("/") : rel;
}

FileKind FileKindOf(NodeKind kind) {
  switch (kind) {
    case NodeKind::kDir:
    case NodeKind::kPassthrough: return FileKind::kDir;
    case NodeKind::kFile: return FileKind::kFile;
    case NodeKind::kSymlink: return FileKind::kSymlink;
  }
  return FileKind::kOther;
}

Result<FileKind> VfsView::Kind(std::string_view path, bool follow) const {
  auto st = follow ? vfs_.Stat(Full(path)) : vfs_.Lstat(Full(path));
  if (!st) return std::move(st).error();
  return FileKindOf(st->kind);
}

}  // namespace rxp::sysfs
