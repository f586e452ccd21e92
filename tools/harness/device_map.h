// Which host RDMA devices the app may use, and under which names: the grammar and the mapping
// are the engine's (rdmaproxy/device_map.h, shared with the C API's device selection); the
// harness adds discovery from sysfs.
//
// A host device is a uverbs char device (/dev/infiniband/uverbsN) and its IB device
// (/sys/class/infiniband/<ibdev>), found through /sys/class/infiniband_verbs/uverbsN/ibdev.
#pragma once

#include <string>
#include <vector>

#include "abi/result.h"
#include "rdmaproxy/device_map.h"

namespace rxp::harness {

using HostDevice = proxy::HostRdmaDevice;
using DeviceMapping = proxy::DeviceMapping;
using proxy::ParseDeviceList;

// The host's uverbs devices from sysfs, sorted by uverbs number (uverbs and ibdev set; the
// driver ids come from NETLINK_RDMA: WithDriverIds). `sysfs_root` is "/sys" except in tests.
Result<std::vector<HostDevice>> DiscoverHostDevices(const std::string& sysfs_root = "/sys");

// `devices` with each one's driver id (and the rest of what NETLINK_RDMA says) filled in from
// `netlink` (QueryHostRdmaDevices), matched by uverbs name; a device netlink does not know keeps
// driver id 0 (RDMA_DRIVER_UNKNOWN).
std::vector<HostDevice> WithDriverIds(std::vector<HostDevice> devices,
                                      const std::vector<proxy::HostRdmaDevice>& netlink);

}  // namespace rxp::harness
