// DiskFs: an FsView over a directory on disk (the host's /sys, a fixture's fake root, a
// rendered tree).
//
// Every lookup goes through openat2(RESOLVE_IN_ROOT) relative to the root's fd, so ".." and
// absolute symlinks are confined to the root the way chroot would confine them: a hostile
// fake root cannot make the reader read outside it. Needs Linux >= 5.6.
#pragma once

#include <string>

#include "sysfs/fs_view.h"
#include "abi/unique_fd.h"

namespace rxp::sysfs {

class DiskFs : public FsView {
 public:
  static Result<DiskFs> Open(const std::string& root);

  Result<std::string> ReadFile(std::string_view path, size_t max_bytes) const override;
  Result<std::vector<std::string>> ListDir(std::string_view path) const override;
  Result<std::string> ReadLink(std::string_view path) const override;
  Result<std::string> RealPath(std::string_view path) const override;
  Result<FileKind> Kind(std::string_view path, bool follow) const override;

  const std::string& root() const { return root_path_; }

 private:
  DiskFs(UniqueFd root, std::string root_path, std::string root_real)
      : root_(std::move(root)), root_path_(std::move(root_path)), root_real_(std::move(root_real)) {}
  Result<UniqueFd> OpenIn(std::string_view path, uint64_t flags) const;
  // The parent directory (O_PATH) and last component of `path`, for no-follow operations.
  Result<std::pair<UniqueFd, std::string>> OpenParent(std::string_view path) const;

  UniqueFd root_;
  std::string root_path_;  // as given, for messages
  std::string root_real_;  // canonical, to turn /proc/self/fd links back into view paths
};

}  // namespace rxp::sysfs
