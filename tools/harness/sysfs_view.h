// The synthesized /sys of a run (`rdmaproxy run --sysfs SNAPSHOT`, `--sysfs-from-host`): a
// host snapshot (sysfs/, docs/sysfs.md) narrowed to the devices the run allows, under the
// sandbox names the harness gives their device nodes. DeviceView (device_view.h) synthesizes
// and writes the result into its private directory and serves all of /sys from it.
//
// The tree and the device nodes must agree, or libibverbs drops or fails the device: its sysfs
// discovery lists /sys/class/infiniband_verbs/<name>, opens /dev/infiniband/<name> and
// compares that node's st_rdev with the tree's `dev` (rdma-core open_cdev()). Under the
// harness the sandbox's /dev/infiniband/<sandbox uverbs> *is* the host's node, renamed
// (device_view.h's path rule), so the tree's uverbs entry gets the sandbox name and the host
// node's real number, and the snapshot must describe that same host device.
#pragma once

#include <string>
#include <vector>

#include "abi/result.h"
#include "sysfs/snapshot_reader.h"
#include "sysfs/snapshot_schema.h"
#include "tools/harness/device_map.h"

namespace rxp::harness {

// `host` narrowed to `devices` (sysfs::Select: their netdevs and PCI functions, every GPU and
// NVSwitch, NUMA), each device's uverbs entry renamed to its sandbox name and numbered as the
// host node `host_dev`/<host uverbs> really is (stat). Errors, one line each: a device the
// snapshot lacks (ENOENT, listing what it has), a snapshot that describes another host device
// under that name -- another uverbs node or another device number, i.e. a stale snapshot or
// one from another host (ESTALE) -- and a host node that cannot be stat'ed.
Result<sysfs::Snapshot> SelectSysfsForDevices(const sysfs::Snapshot& host,
                                              const std::vector<DeviceMapping>& devices,
                                              const std::string& host_dev = "/dev/infiniband");

// A snapshot of the live sysfs at `host_sysfs` (sysfs::ReadSnapshot) holding only the RDMA
// devices of `devices` (and what comes with them: their netdevs, PCI ancestry, GPUs, NUMA), so
// that a device the run does not use cannot make it fail. Warnings (an unreadable attribute)
// are in the result for the caller to log.
Result<sysfs::ReadResult> SnapshotHostSysfs(const std::string& host_sysfs,
                                            const std::vector<DeviceMapping>& devices);

}  // namespace rxp::harness
