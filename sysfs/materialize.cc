#include "sysfs/materialize.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <memory>
#include <vector>

#include "sysfs/names.h"
#include "abi/unique_fd.h"

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
  dup.release();
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

// Files with equal keys are interchangeable: same bytes, mode and EINVAL-ness.
struct FileKey {
  uint16_t mode;
  bool fails;
  std::string_view data;  // views the tree's node, which outlives the writer
  bool operator==(const FileKey&) const = default;
};
struct FileKeyHash {
  size_t operator()(const FileKey& k) const {
    return std::hash<std::string_view>{}(k.data) ^ (size_t{k.mode} << 1) ^ size_t{k.fails};
  }
};
FileKey KeyOf(const Node& n) { return FileKey{n.mode, n.read_fails, n.read_fails ? std::string_view() : n.data}; }

// A file written once and hard-linked wherever the same content appears again: most of a
// tree is GID-table entries (zero GIDs, EINVAL stand-ins, "0x0000" pkeys) and repeated
// values, and on the build machines linkat costs a third of creating and writing a file.
struct LinkSource {
  UniqueFd dir;  // a duplicate of the directory fd that holds `name`
  std::string name;
};

// Writes a tree depth first: at most one fd per level is open, plus the link sources.
class Writer {
 public:
  Writer(const Tree& tree, MaterializeStats* stats) : tree_(tree), stats_(stats) {
    std::unordered_map<FileKey, uint32_t, FileKeyHash> counts;
    for (NodeId id = 0; id < tree.size(); ++id)
      if (const Node& n = tree.node(id); n.kind == NodeKind::kFile) ++counts[KeyOf(n)];
    for (const auto& [key, count] : counts)
      if (count >= 2) repeated_.insert(key);
  }

  Result<void> WriteDir(NodeId dir, int dirfd, int depth) {
    if (depth > 256) return Fail(ELOOP, "{}: tree nested too deep", tree_.PathOf(dir));
    for (NodeId id : tree_.Children(dir)) {
      const Node& n = tree_.node(id);
      const char* name = n.name.c_str();  // checked by Tree: no '/', "." or ".."
      switch (n.kind) {
        case NodeKind::kDir:
        case NodeKind::kPassthrough: {
          if (::mkdirat(dirfd, name, n.mode) != 0) return Errno("mkdir", tree_.PathOf(id));
          ++stats_->dirs;
          if (n.kind == NodeKind::kPassthrough) break;
          UniqueFd sub(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
          if (!sub.valid()) return Errno("open", tree_.PathOf(id));
          RXP_TRY(WriteDir(id, sub.get(), depth + 1));
          break;
        }
        case NodeKind::kFile:
          RXP_TRY(WriteFile(id, n, dirfd));
          ++stats_->files;
          break;
        case NodeKind::kSymlink:
          if (::symlinkat(n.data.c_str(), dirfd, name) != 0) return Errno("symlink", tree_.PathOf(id));
          ++stats_->links;
          break;
      }
    }
    return Ok();
  }

 private:
  static constexpr size_t kMaxSources = 256;  // fds held for link sources

  Result<void> WriteFile(NodeId id, const Node& n, int dirfd) {
    FileKey key = KeyOf(n);
    bool repeated = repeated_.count(key) != 0;
    if (repeated) {
      if (auto src = sources_.find(key); src != sources_.end()) {
        // linkat with flags 0 and a plain name never follows a link, and the source is a
        // regular file this writer created in a directory it created.
        if (::linkat(src->second.dir.get(), src->second.name.c_str(), dirfd, n.name.c_str(), 0) == 0) return Ok();
        if (errno != EMLINK) return Errno("link", tree_.PathOf(id));
      }
    }
    UniqueFd f(::openat(dirfd, n.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, n.mode));
    if (!f.valid()) return Errno("create", tree_.PathOf(id));
    if (!n.read_fails) RXP_TRY(WriteAll(f.get(), n.data, tree_.PathOf(id)));
    if (repeated && sources_.size() < kMaxSources && !sources_.count(key))
      sources_.emplace(key, LinkSource{UniqueFd(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0)), n.name});
    return Ok();
  }

  const Tree& tree_;
  MaterializeStats* stats_;
  std::unordered_set<FileKey, FileKeyHash> repeated_;
  std::unordered_map<FileKey, LinkSource, FileKeyHash> sources_;
};

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
  RXP_TRY(Writer(tree, &stats).WriteDir(Tree::kRoot, root.get(), 0));
  return stats;
}

}  // namespace rxp::sysfs
