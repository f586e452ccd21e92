#include "sysfs/disk_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sysfs/names.h"

namespace rxp::sysfs {
namespace {

// "/class/net" -> "class/net"; "" and "/" -> ".".
std::string Relative(std::string_view path) {
  size_t start = path.find_first_not_of('/');
  if (start == std::string_view::npos) return ".";
  return std::string(path.substr(start));
}

Error Errno(std::string_view what, std::string_view path) {
  int e = errno;
  return Fail(e, "{} {}: {}", what, Quote(path), std::strerror(e));
}

Result<std::string> FdPath(int fd) {
  char link[64], buf[4096];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, buf, sizeof(buf));
  if (n < 0) return Fail(errno, "readlink {}: {}", link, std::strerror(errno));
  if (static_cast<size_t>(n) >= sizeof(buf)) return Fail(ENAMETOOLONG, "path of fd {} too long", fd);
  return std::string(buf, static_cast<size_t>(n));
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

Result<DiskFs> DiskFs::Open(const std::string& root) {
  UniqueFd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Errno("open", root);
  auto real = FdPath(fd.get());
  if (!real) return std::move(real).error();
  // Probe openat2 once so an old kernel gives one clear error, not one per file.
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long probe = ::syscall(SYS_openat2, fd.get(), ".", &how, sizeof(how));
  if (probe < 0) {
    if (errno == ENOSYS) return Fail(ENOSYS, "openat2 is unavailable (Linux >= 5.6 needed)");
    return Errno("openat2", root);
  }
  ::close(static_cast<int>(probe));
  return DiskFs(std::move(fd), root, *real == "/" ? std::string() : std::move(*real));
}

Result<UniqueFd> DiskFs::OpenIn(std::string_view path, uint64_t flags) const {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  std::string rel = Relative(path);
  // With RESOLVE_IN_ROOT the kernel answers EAGAIN when a rename or mount anywhere on the
  // system raced a ".." step of the walk (it cannot prove the walk stayed inside the root:
  // nd_jump_root / legitimize_root, openat2(2) "EAGAIN"); the man page says to retry. A
  // symlink farm such as /sys/class/* is all "..", so a busy machine hits this.
  long fd = -1;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd = ::syscall(SYS_openat2, root_.get(), rel.c_str(), &how, sizeof(how));
    if (fd >= 0 || errno != EAGAIN) break;
  }
  if (fd < 0) return Errno("open", path);
  return UniqueFd(static_cast<int>(fd));
}

Result<std::pair<UniqueFd, std::string>> DiskFs::OpenParent(std::string_view path) const {
  std::string rel = Relative(path);
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  size_t slash = rel.rfind('/');
  std::string dir = slash == std::string::npos ? "." : rel.substr(0, slash);
  std::string base = slash == std::string::npos ? rel : rel.substr(slash + 1);
  auto fd = OpenIn(dir, O_PATH | O_DIRECTORY);
  if (!fd) return std::move(fd).error();
  return std::pair{std::move(*fd), std::move(base)};
}

Result<std::string> DiskFs::ReadFile(std::string_view path, size_t max_bytes) const {
  // O_NONBLOCK: a FIFO planted in a fake root must not hang the reader.
  auto fd = OpenIn(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd) return std::move(fd).error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return Errno("fstat", path);
  if (S_ISDIR(st.st_mode)) return Fail(EISDIR, "{} is a directory", Quote(path));
  // Not EINVAL: that errno means "attribute without a value" to the snapshot reader.
  if (!S_ISREG(st.st_mode)) return Fail(ENXIO, "{} is not a regular file", Quote(path));
  std::string out;
  char buf[4096];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd->get(), buf, std::min(sizeof(buf), max_bytes - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read", path);  // EINVAL here is the kernel's "no value" (e.g. speed)
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::vector<std::string>> DiskFs::ListDir(std::string_view path) const {
  auto fd = OpenIn(path, O_RDONLY | O_DIRECTORY);
  if (!fd) return std::move(fd).error();
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd->get()));
  if (!dir) return Errno("fdopendir", path);
  fd->release();  // closedir owns it now
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(dir.get())) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  if (errno != 0) return Errno("readdir", path);
  return names;
}

Result<std::string> DiskFs::ReadLink(std::string_view path) const {
  auto parent = OpenParent(path);
  if (!parent) return std::move(parent).error();
  char buf[4096];
  ssize_t n = ::readlinkat(parent->first.get(), parent->second.c_str(), buf, sizeof(buf));
  if (n < 0) return Errno("readlink", path);
  if (static_cast<size_t>(n) >= sizeof(buf)) return Fail(ENAMETOOLONG, "link {} too long", Quote(path));
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> DiskFs::RealPath(std::string_view path) const {
  auto fd = OpenIn(path, O_PATH);
  if (!fd) return std::move(fd).error();
  auto real = FdPath(fd->get());
  if (!real) return std::move(real).error();
  if (!real->starts_with(root_real_) ||
      (real->size() > root_real_.size() && (*real)[root_real_.size()] != '/'))
    return Fail(EXDEV, "{} resolved outside the root", Quote(path));
  std::string rel = real->substr(root_real_.size());
  return rel.empty() ? std::string("/") : rel;
}

Result<FileKind> DiskFs::Kind(std::string_view path, bool follow) const {
  struct stat st {};
  if (follow) {
    auto fd = OpenIn(path, O_PATH);
    if (!fd) return std::move(fd).error();
    if (::fstat(fd->get(), &st) != 0) return Errno("fstat", path);
  } else {
    auto parent = OpenParent(path);
    if (!parent) return std::move(parent).error();
    const char* base = parent->second == "." ? "" : parent->second.c_str();
    int flags = AT_SYMLINK_NOFOLLOW | (*base == '\0' ? AT_EMPTY_PATH : 0);
    if (::fstatat(parent->first.get(), base, &st, flags) != 0) return Errno("lstat", path);
  }
  if (S_ISDIR(st.st_mode)) return FileKind::kDir;
  if (S_ISREG(st.st_mode)) return FileKind::kFile;
  if (S_ISLNK(st.st_mode)) return FileKind::kSymlink;
  return FileKind::kOther;
}

}  // namespace rxp::sysfs
