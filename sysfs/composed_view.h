// ComposedView: what a sandbox sees as /sys, the synthesized tree plus the host's files at
// the passthrough points (policy.h), resolved the way the kernel would resolve one tree.
//
// This is the reference for an embedder: resolution starts in the synthesized tree; at a
// passthrough point it continues on the host component by component, and whenever a host
// symlink or a ".." leads out of the passthrough directory it starts over in the synthesized
// tree. A host link such as /sys/devices/system/cpu/cpu0/node0 -> ../../node/node0 therefore
// reaches the synthesized node0, and a link to a hidden part (cpu0/firmware_node -> ACPI)
// finds nothing, instead of exposing the host's.
#pragma once

#include <string>

#include "sysfs/fs_view.h"
#include "sysfs/vfs.h"

namespace rxp::sysfs {

class ComposedView : public FsView {
 public:
  // `host` is the host's /sys (a DiskFs on "/sys", or a fixture's sys/ in tests).
  ComposedView(const SysfsVfs& vfs, const FsView& host) : vfs_(vfs), host_(host) {}

  Result<std::string> ReadFile(std::string_view path, size_t max_bytes) const override;
  Result<std::vector<std::string>> ListDir(std::string_view path) const override;
  Result<std::string> ReadLink(std::string_view path) const override;
  Result<std::string> RealPath(std::string_view path) const override;
  Result<FileKind> Kind(std::string_view path, bool follow) const override;

  // Where a view path ("/devices/system/cpu/online") ends up: a tree node, or a host path
  // relative to the host's /sys ("/devices/system/cpu/online").
  struct Target {
    bool on_host = false;
    NodeId node = Tree::kRoot;
    std::string host_path;
  };
  Result<Target> Locate(std::string_view path, bool follow_last) const;

 private:
  const SysfsVfs& vfs_;
  const FsView& host_;
};

}  // namespace rxp::sysfs
