#include "sysfs/snapshot_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "abi/unique_fd.h"

namespace rxp::sysfs {
namespace {

Error Errno(std::string_view what, const std::string& path) {
  int e = errno;
  return Fail(e, "{} {}: {}", what, path, std::strerror(e));
}

}  // namespace

Result<Snapshot> LoadSnapshotFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return Errno("open", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat", path);
  if (!S_ISREG(st.st_mode)) return Fail(EINVAL, "{} is not a regular file", path);
  if (static_cast<uint64_t>(st.st_size) > Limits::kJsonBytes)
    return Fail(E2BIG, "{}: {} bytes exceed the snapshot limit of {}", path, st.st_size, Limits::kJsonBytes);
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read", path);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > Limits::kJsonBytes) return Fail(E2BIG, "{}: grew past the snapshot limit while read", path);
  }
  auto snapshot = ParseSnapshot(text);
  if (!snapshot) return Error{snapshot.error().errnum, path + ": " + snapshot.error().reason};
  return snapshot;
}

namespace {

// All of `text` to `fd` (named `path` in the error), across short writes and EINTR.
Result<void> WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

}  // namespace

Result<void> SaveSnapshotFile(const Snapshot& snapshot, const std::string& path) {
  std::string text = SerializeSnapshot(snapshot);
  // A new or regular file is replaced atomically (written beside it, then renamed over it).
  // Anything else at the path (a device, a FIFO, a symlink such as /dev/stdout) is written in
  // place, as a shell's ">" would, never replaced by a regular file.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid()) return Errno("open", path);
    return WriteAll(fd.get(), text, path);
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) return Errno("create", tmp);
  if (auto written = WriteAll(fd.get(), text, tmp); !written) {
    ::unlink(tmp.c_str());
    return written;
  }
  if (::fsync(fd.get()) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = Errno("save", path);
    ::unlink(tmp.c_str());
    return e;
  }
  return Ok();
}

}  // namespace rxp::sysfs
