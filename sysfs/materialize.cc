#include "sysfs/materialize.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "sysfs/names.h"
#include "sysfs/unique_fd.h"

namespace rxp::sysfs {
namespace {

Error Errno(std::string_view what, std::string_view path) {
  int e = errno;
  return Fail(e, "{} {}: {}", what, path, std::strerror(e));
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Entries of an open directory (the fd stays open: a duplicate is handed to fdopendir).
Result<std::vector<std::string>> Entries(int dirfd, std::string_view where) {
  UniqueFd dup(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dup.valid()) return Errno("dup", where);
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dup.get()));
  if (!dir) return Errno("fdopendir", where);
  dup.Release();
  ::rewinddir(dir.get());
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir.get())) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  return names;
}

// Empties `dirfd` (on device `dev`) depth-first; never follows a link, never crosses a mount.
Result<void> RemoveContents(int dirfd, dev_t dev, const std::string& where, int depth) {
  if (depth > 256) return Fail(ELOOP, "{}: nested too deep to remove", where);
  auto names = Entries(dirfd, where);
  if (!names) return std::move(names).error();
  for (const auto& name : *names) {
    std::string path = where + "/" + name;
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Errno("lstat", path);
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != dev) return Fail(EXDEV, "{} is a mount point; refusing to empty it", path);
      UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) return Errno("open", path);
      RXP_TRY(RemoveContents(sub.get(), dev, path, depth + 1));
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0) return Errno("rmdir", path);
    } else if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
      return Errno("unlink", path);
    }
  }
  return Ok();
}

Result<void> WriteAll(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

// Writes the children of `dir` into `dirfd`, depth first, so at most one fd per level is
// open (a wide directory such as /sys/bus/pci/devices costs no extra descriptors).
Result<void> WriteDir(const Tree& tree, NodeId dir, int dirfd, MaterializeStats* stats, int depth) {
  if (depth > 256) return Fail(ELOOP, "{}: tree nested too deep", tree.PathOf(dir));
  for (NodeId id : tree.Children(dir)) {
    const Node& n = tree.node(id);
    const char* name = n.name.c_str();  // checked by Tree: no '/', "." or ".."
    switch (n.kind) {
      case NodeKind::kDir:
      case NodeKind::kPassthrough: {
        if (::mkdirat(dirfd, name, n.mode) != 0) return Errno("mkdir", tree.PathOf(id));
        ++stats->dirs;
        if (n.kind == NodeKind::kPassthrough) break;
        UniqueFd sub(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid()) return Errno("open", tree.PathOf(id));
        RXP_TRY(WriteDir(tree, id, sub.get(), stats, depth + 1));
        break;
      }
      case NodeKind::kFile: {
        UniqueFd f(::openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, n.mode));
        if (!f.valid()) return Errno("create", tree.PathOf(id));
        if (!n.read_fails) RXP_TRY(WriteAll(f.get(), n.data, tree.PathOf(id)));
        ++stats->files;
        break;
      }
      case NodeKind::kSymlink:
        if (::symlinkat(n.data.c_str(), dirfd, name) != 0) return Errno("symlink", tree.PathOf(id));
        ++stats->links;
        break;
    }
  }
  return Ok();
}

}  // namespace

Result<MaterializeStats> Materialize(const Tree& tree, const std::string& out_dir,
                                     const MaterializeOptions& options) {
  if (::mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST) return Errno("mkdir", out_dir);
  // O_NOFOLLOW: a symlink planted at the output path must not redirect the render.
  UniqueFd root(::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) {
    if (errno == ELOOP || errno == ENOTDIR)
      return Fail(errno, "{} is a symbolic link or not a directory; refusing to render into it", out_dir);
    return Errno("open", out_dir);
  }
  auto existing = Entries(root.get(), out_dir);
  if (!existing) return std::move(existing).error();
  if (!existing->empty()) {
    if (!options.replace_existing)
      return Fail(EEXIST, "{} is not empty ({} entries); pass --force to replace its contents",
                  out_dir, existing->size());
    struct stat st {};
    if (::fstat(root.get(), &st) != 0) return Errno("stat", out_dir);
    RXP_TRY(RemoveContents(root.get(), st.st_dev, out_dir, 0));
  }

  MaterializeStats stats;
  RXP_TRY(WriteDir(tree, Tree::kRoot, root.get(), &stats, 0));
  return stats;
}

}  // namespace rxp::sysfs
