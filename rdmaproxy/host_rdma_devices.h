// The host's RDMA devices as the kernel reports them over NETLINK_RDMA (RDMA_NLDEV_CMD_GET and
// RDMA_NLDEV_CMD_GET_CHARDEV "uverbs", the queries libibverbs itself makes in
// find_sysfs_devs_nl): the IB device, its uverbs char device and -- what sysfs does not say --
// the uverbs driver id every ioctl header must carry (ib_uverbs_cmd_verbs checks it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "abi/result.h"

namespace rxp::proxy {

struct HostRdmaDevice {
  uint32_t index = 0;        // RDMA_NLDEV_ATTR_DEV_INDEX
  std::string ibdev;         // "mlx5_0", "rxe1"
  std::string uverbs;        // "uverbs3"
  uint32_t driver_id = 0;    // enum rdma_driver_id (RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID)
  uint64_t abi_version = 0;  // the driver's uverbs ABI (RDMA_NLDEV_ATTR_CHARDEV_ABI)
  uint64_t dev = 0;          // huge_encode_dev() of the char device (RDMA_NLDEV_ATTR_CHARDEV)
};

// Every RDMA device with a uverbs char device. An empty list when the kernel has no RDMA
// netlink (no RDMA at all); an error when the socket works but the answers do not parse.
Result<std::vector<HostRdmaDevice>> QueryHostRdmaDevices();

}  // namespace rxp::proxy
