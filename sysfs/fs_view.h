// FsView: the read-only operations the snapshot reader needs from a sysfs mount.
//
// Two implementations: DiskFs (a real directory: the host's /sys, a fake root, a rendered
// tree) and VfsView (a synthesized tree, in memory). Reading a snapshot back from either is
// how the tests prove that snapshot -> render -> snapshot is lossless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"

namespace rxp::sysfs {

enum class FileKind { kDir, kFile, kSymlink, kOther };

class FsView {
 public:
  virtual ~FsView() = default;

  // Paths are absolute within the view: "/class/net" is <mount>/class/net. Symlinks are
  // followed except by ReadLink and Kind(follow = false), and never lead out of the view.
  // Errors carry the kernel's errno (ENOENT, ENOTDIR, EINVAL from an attribute, ...).
  virtual Result<std::string> ReadFile(std::string_view path, size_t max_bytes) const = 0;
  virtual Result<std::vector<std::string>> ListDir(std::string_view path) const = 0;
  virtual Result<std::string> ReadLink(std::string_view path) const = 0;
  // The canonical path ("/devices/pci0000:00/0000:00:01.0"), like realpath(3) in the view.
  virtual Result<std::string> RealPath(std::string_view path) const = 0;
  virtual Result<FileKind> Kind(std::string_view path, bool follow) const = 0;
};

}  // namespace rxp::sysfs
