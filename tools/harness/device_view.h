// DeviceView: what the app sees of /dev/infiniband and /sys -- path rules plus a small
// directory the harness renders at start (a private temp dir, removed at exit).
//
// /dev/infiniband is always the same: the rendered directory holds
//   dev/infiniband/<sandbox uverbs>   -> /dev/infiniband/<host uverbs>   (and rdma_cm)
// and the rules (PathRule) send
//   /dev/infiniband/<sandbox uverbs>  -> /dev/infiniband/<host uverbs>, proxied
//   /dev/infiniband/rdma_cm           -> itself, proxied
//   /dev/infiniband (the directory)   -> the rendered dev/infiniband
//   /dev/infiniband/<anything else>   -> ENOENT (not allowed, or not proxied: umad, issm)
//
// /sys is served one of three ways (docs/harness.md "How /sys is served"):
//   - a snapshot (`sysfs_snapshot`: rdmaproxy run --sysfs, --sysfs-from-host): the snapshot is
//     narrowed to the allowed devices under their sandbox names (sysfs_view.h), synthesized
//     and written into the rendered directory's sys/; all of /sys is served from there;
//   - a directory rendered beforehand (`sysfs_dir`: --sysfs-dir): all of /sys from it;
//   - neither: the host's /sys with the class directories replaced by link farms,
//       sys/class/infiniband/<ibdev>      -> the host's own link text (../../devices/...)
//       sys/class/infiniband_verbs/<sandbox uverbs> -> the host uverbs device's link text
//       sys/class/infiniband_verbs/abi_version      (a copy)
//       sys/class/infiniband_mad/                   (no umad devices: they are not proxied)
//       sys/devices                       -> /sys/devices
//     so a listing shows only the allowed devices under their sandbox names while every
//     attribute is the host's live file. What this cannot hide (docs/harness.md "Limits"):
//     the host's /sys/devices tree itself (a program that walks /sys/devices or /sys/bus
//     finds every device), and realpath() of a class link, which shows the host's uverbs
//     number.
// With a served tree, the passthrough prefixes of sysfs/policy.h (/sys/devices/system/cpu,
// /sys/fs/cgroup, the hugepage and THP settings) stay the host's own, as that policy says.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abi/result.h"
#include "sysfs/snapshot_schema.h"
#include "tools/harness/device_map.h"
#include "tools/harness/path_resolver.h"

namespace rxp::harness {

struct DeviceViewOptions {
  std::string host_sysfs = "/sys";            // where the host's sysfs is (tests: a fake tree)
  std::string host_dev = "/dev/infiniband";   // where the host's device nodes are
  std::optional<std::string> sysfs_dir;       // serve all of /sys from here instead
  std::optional<sysfs::Snapshot> sysfs_snapshot;  // or synthesize it from this host snapshot
  std::string temp_parent;                    // "" : $TMPDIR or /tmp
};

class DeviceView {
 public:
  // Errors: the directory cannot be made or written; with a snapshot, what
  // SelectSysfsForDevices refuses (a device the snapshot lacks or describes differently) and
  // what synthesis refuses. Nothing is left on disk after an error.
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
