// TempDir: a fresh directory, removed with its contents at scope exit. Under $TMPDIR when set,
// else /dev/shm (tmpfs: rendering thousands of small files on the build machines' disk is
// 30x slower), else the system temp directory.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace rxp::sysfs::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (BaseDir() / "rxp-sysfs-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? made : "";
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    // remove_all does not follow symlinks; make read-only dirs writable first.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  static std::filesystem::path BaseDir() {
    std::error_code ec;
    if (::getenv("TMPDIR") == nullptr && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
    return std::filesystem::temp_directory_path(ec);
  }
  std::string path_;
};

}  // namespace rxp::sysfs::testing
