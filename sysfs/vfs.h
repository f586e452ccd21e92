// SysfsVfs: serves a synthesized tree the way the kernel serves /sys, for embedders (the
// ptrace harness, a Sentry-style runtime) that answer a sandbox's file syscalls themselves.
//
// Paths are absolute and start with /sys. Resolution follows the kernel's rules: "." and ".."
// are components (".." at /sys stays at /sys: the embedder canonicalizes across the mount
// point before calling), symlinks are followed up to 40 times (ELOOP beyond), a trailing
// slash demands a directory. Errors are the kernel's: ENOENT, ENOTDIR, EISDIR, EINVAL
// (readlink of a non-link; read of an attribute the kernel fails, e.g. an unpopulated GID's
// gid_attrs/types/N), ELOOP, ENAMETOOLONG.
//
// Passthrough (policy.h): a path at or below a passthrough point is the host's. Lookup()
// reports it with the host directory and the unresolved rest; every other operation fails
// with EXDEV for it. ComposedView (composed_view.h) is the reference way to resolve it.
//
// Thread-safety: all methods are const and the tree is immutable; share one instance.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"
#include "sysfs/fs_view.h"
#include "sysfs/tree.h"

namespace rxp::sysfs {

struct VfsStat {
  NodeKind kind = NodeKind::kFile;
  uint32_t mode = 0;   // st_mode: type bits | permissions
  uint64_t size = 0;   // 4096 for attributes (what sysfs reports), 0 for dirs and links
  uint64_t ino = 0;    // stable for the tree's lifetime
};

struct VfsDirEntry {
  std::string_view name;  // valid as long as the tree
  NodeKind kind;
  uint64_t ino;
};

struct Lookup {
  NodeId node = Tree::kRoot;
  // Set when resolution reached a passthrough point: the host directory ("/sys/devices/
  // system/cpu") and what is left of the path below it, unresolved ("cpu0/topology/..").
  bool passthrough = false;
  std::string host_dir;
  std::string rest;
};

class SysfsVfs {
 public:
  explicit SysfsVfs(std::shared_ptr<const Tree> tree);

  Result<Lookup> Resolve(std::string_view path, bool follow_last = true) const;
  Result<VfsStat> Stat(std::string_view path) const;
  Result<VfsStat> Lstat(std::string_view path) const;
  Result<std::string> ReadLink(std::string_view path) const;
  // pread(2): copies at most buf.size() bytes from `offset`; 0 at or past the end.
  Result<size_t> Read(std::string_view path, uint64_t offset, std::span<char> buf) const;
  Result<std::string> ReadAll(std::string_view path) const;
  // Without "." and "..", in creation order.
  Result<std::vector<VfsDirEntry>> ReadDir(std::string_view path) const;
  Result<std::string> RealPath(std::string_view path) const;

  const Tree& tree() const { return *tree_; }

 private:
  Result<NodeId> ResolveLocal(std::string_view path, bool follow_last) const;
  VfsStat StatOf(NodeId id) const;

  std::shared_ptr<const Tree> tree_;
};

// The FsView kind of a tree node (a passthrough point is a directory).
FileKind FileKindOf(NodeKind kind);

// FsView over a SysfsVfs: view path "/class/net" is VFS path "/sys/class/net".
class VfsView : public FsView {
 public:
  explicit VfsView(const SysfsVfs& vfs) : vfs_(vfs) {}
  Result<std::string> ReadFile(std::string_view path, size_t max_bytes) const override;
  Result<std::vector<std::string>> ListDir(std::string_view path) const override;
  Result<std::string> ReadLink(std::string_view path) const override;
  Result<std::string> RealPath(std::string_view path) const override;
  Result<FileKind> Kind(std::string_view path, bool follow) const override;

 private:
  std::string Full(std::string_view path) const;
  const SysfsVfs& vfs_;
};

}  // namespace rxp::sysfs
