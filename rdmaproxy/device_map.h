// Which host RDMA devices a sandbox may use, and under which names -- one grammar for
// `rdmaproxy run --devices` and the C API's rxp_config_select_devices.
//
// The app sees a chosen subset of the host's uverbs devices (host_rdma_devices.h), each under
// a sandbox uverbs name that may differ from the host's (`uverbs0` in the sandbox may be host
// `uverbs3`); the IB device keeps its name.
//
// Grammar: a comma-separated list of [SANDBOX=]HOST, where HOST is a uverbs name (uverbs3)
// or an IB device name (mlx5_0, rxe1) and SANDBOX a uverbs name. Without SANDBOX the host's
// uverbs name is kept. An empty list means every host device, names unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"
#include "rdmaproxy/host_rdma_devices.h"

namespace rxp::proxy {

struct DeviceMapping {
  std::string sandbox_uverbs;  // the name the app sees: /dev/infiniband/<sandbox_uverbs>
  HostRdmaDevice host;
};

// Parses a device list against the host's devices. Errors name the offending item: an
// unknown device (ENODEV, listing what the host has), a sandbox name that is not uverbsN, a
// sandbox name or host device used twice (EINVAL).
Result<std::vector<DeviceMapping>> ParseDeviceList(std::string_view spec,
                                                   const std::vector<HostRdmaDevice>& host);

// "uverbs<digits>": its number, or -1.
long UverbsNumber(std::string_view name);

// `s` without leading blanks and trailing blanks and newlines: an item of a device list, or
// a one-line sysfs attribute such as infiniband_verbs/uverbsN/ibdev.
std::string Trim(std::string_view s);

}  // namespace rxp::proxy
