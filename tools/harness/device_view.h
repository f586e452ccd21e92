// DeviceView: what the app sees of /dev/infiniband and /sys until the sysfs module renders a
// full synthesized tree — path rules plus a small directory the harness renders at start.
//
// The rendered directory (a private temp dir, removed at exit) holds:
//   dev/infiniband/<sandbox uverbs>   -> /dev/infiniband/<host uverbs>   (and rdma_cm)
//   sys/class/infiniband/<ibdev>      -> the host's own link text (../../devices/...)
//   sys/class/infiniband_verbs/<sandbox uverbs> -> the host uverbs device's link text
//   sys/class/infiniband_verbs/abi_version      (a copy)
//   sys/class/infiniband_mad/                   (no umad devices: they are not proxied)
//   sys/devices                       -> /sys/devices
// so a listing shows only the allowed devices under their sandbox names, while every
// attribute is still the host's live file (the class links climb into sys/devices, which is the
// host's). The rules (PathRule) send:
//   /dev/infiniband/<sandbox uverbs>  -> /dev/infiniband/<host uverbs>, proxied
//   /dev/infiniband/rdma_cm           -> itself, proxied
//   /dev/infiniband (the directory)   -> the rendered dev/infiniband
//   /dev/infiniband/<anything else>   -> ENOENT (not allowed, or not proxied: umad, issm)
//   /sys/class/infiniband{,_verbs,_mad} -> the rendered sys/class/...
// or, with a sysfs directory (--sysfs-dir), all of /sys -> that directory.
//
// What this cannot hide (docs/harness.md "Limits"): the host's /sys/devices tree itself (a
// program that walks /sys/devices or /sys/bus finds every device), and realpath() of a class
// link, which shows the host's uverbs number.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abi/result.h"
#include "tools/harness/device_map.h"
#include "tools/harness/path_resolver.h"

namespace rxp::harness {

struct DeviceViewOptions {
  std::string host_sysfs = "/sys";            // where the host's sysfs is (tests: a fake tree)
  std::string host_dev = "/dev/infiniband";   // where the host's device nodes are
  std::optional<std::string> sysfs_dir;       // serve all of /sys from here instead
  std::string temp_parent;                    // "" : $TMPDIR or /tmp
};

class DeviceView {
 public:
  static Result<std::unique_ptr<DeviceView>> Create(const std::vector<DeviceMapping>& devices,
                                                    const DeviceViewOptions& options);
  ~DeviceView();  // removes the rendered directory
  DeviceView(const DeviceView&) = delete;
  DeviceView& operator=(const DeviceView&) = delete;

  const std::string& root() const { return root_; }
  const std::vector<PathRule>& rules() const { return rules_; }

  DeviceView() = default;  // empty; use Create

 private:
  std::string root_;
  std::vector<PathRule> rules_;
};

}  // namespace rxp::harness
