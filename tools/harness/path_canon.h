// Making a tracee's path absolute and canonical in the sandbox namespace.
//
// The kernel resolves a path relative to the caller's cwd or to a dirfd, follows symlinks and
// walks ".." physically. The harness must decide on the same file before the kernel looks, so
// it: takes the base from /proc/<tid>/cwd or /proc/<tid>/fd/<dirfd> and maps it to its sandbox
// name (a dirfd opened on a redirected view directory is, for the app, the directory it asked
// for); collapses "//" and "."; resolves ".." against the physical parent (realpath of the host
// path so far — /sys/class/pci_bus/X/../.. climbs through the symlink target, as the kernel
// does, not lexically); and substitutes /proc magic links (/proc/<pid>/{cwd,root,fd/N},
// /proc/self, /proc/thread-self, /dev/fd) the way the kernel would jump through them.
//
// Other symlinks are left for the kernel: a rewrite hands it the host path with the remaining
// components unchanged. The lexical check therefore does not see a private symlink that points
// into /dev/infiniband (docs/threat-model.md, "Path redirection").
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <string>
#include <string_view>

#include "abi/result.h"
#include "tools/harness/path_resolver.h"

namespace rxp::harness {

// Lexical helpers on absolute paths.
std::string NormalizePath(std::string_view absolute);           // "//a/./b/../c" -> "/a/c"
std::string JoinPath(std::string_view base, std::string_view rel);  // then NormalizePath
bool PathIsUnder(std::string_view path, std::string_view dir);  // path == dir or dir/...

// What the canonicalizer asks of the host; faked in tests.
class HostFs {
 public:
  virtual ~HostFs() = default;
  virtual Result<std::string> ReadLink(const std::string& path) = 0;
  virtual Result<std::string> RealPath(const std::string& path) = 0;
};

// The real thing: readlink(2) and realpath(3) in the harness (which shares the tracee's mount
// namespace and root).
class LocalHostFs final : public HostFs {
 public:
  Result<std::string> ReadLink(const std::string& path) override;
  Result<std::string> RealPath(const std::string& path) override;
};

struct CanonRequest {
  pid_t tid = 0;
  pid_t tgid = 0;
  int dirfd = AT_FDCWD;     // as passed (AT_FDCWD for the non-*at syscalls)
  std::string_view raw;     // the path as the tracee wrote it
  bool follow_last = true;  // false for lstat, readlink, O_NOFOLLOW, AT_SYMLINK_NOFOLLOW
};

struct CanonicalPath {
  std::string sandbox;  // absolute, normalized, in the sandbox namespace
  // The host path the kernel would use if the raw path were left alone, computed lexically;
  // only meaningful when `lexical` is true (no "..", no magic link was crossed).
  std::string untouched_host;
  bool lexical = true;
  // A relative path whose base (the cwd or dirfd) is a redirected directory: the kernel walks
  // from the host path it was redirected to, whose ".." is not the sandbox's.
  bool base_redirected = false;
  // The walk crossed a host path that has no sandbox name (HostToSandbox said nullopt): the
  // file is hidden from the app, which must see ENOENT. `sandbox` is then meaningless.
  bool hidden = false;
  std::string hidden_host;
};

// True for the /proc entries the kernel resolves as magic links (proc_pid_get_link,
// proc_fd_link): /proc/<pid>/{cwd,root}, /proc/<pid>/fd/<n>, and the same under task/<tid>.
bool IsProcMagicLink(std::string_view path);

// ENOENT for an empty path; EBADF/ENOENT/ENOTDIR/... when the base cannot be read (the caller
// then lets the kernel produce its own error). A hidden path is a success with `hidden` set.
Result<CanonicalPath> Canonicalize(const CanonRequest& req, HostFs& fs,
                                   const PathResolver& resolver);

}  // namespace rxp::harness
