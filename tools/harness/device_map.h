// Which host RDMA devices the app may use, and under which names.
//
// A host device is a uverbs char device (/dev/infiniband/uverbsN) and its IB device
// (/sys/class/infiniband/<ibdev>), found through /sys/class/infiniband_verbs/uverbsN/ibdev.
// The app sees a chosen subset, each under a sandbox uverbs name that may differ from the
// host's (`uverbs0` in the sandbox may be host `uverbs3`); the IB device keeps its name.
//
// `--devices` grammar: a comma-separated list of [SANDBOX=]HOST, where HOST is a uverbs name
// (uverbs3) or an IB device name (mlx5_0, rxe1) and SANDBOX a uverbs name. Without SANDBOX
// the host's uverbs name is kept. An empty list means every host device, names unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"

namespace rxp::harness {

struct HostDevice {
  std::string uverbs;  // "uverbs3"
  std::string ibdev;   // "mlx5_0"
};

struct DeviceMapping {
  std::string sandbox_uverbs;  // the name the app sees: /dev/infiniband/<sandbox_uverbs>
  HostDevice host;
};

// The host's uverbs devices, sorted by uverbs number. `sysfs_root` is "/sys" except in tests.
Result<std::vector<HostDevice>> DiscoverHostDevices(const std::string& sysfs_root = "/sys");

// Parses a --devices list against the host's devices. Errors name the offending item: an
// unknown device, a sandbox name that is not uverbsN, a sandbox name or host device used twice.
Result<std::vector<DeviceMapping>> ParseDeviceList(std::string_view spec,
                                                   const std::vector<HostDevice>& host);

}  // namespace rxp::harness
