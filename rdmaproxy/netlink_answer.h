// The RDMA netlink queries a sandbox answers for its app itself -- from the host kernel's own
// answer, narrowed to the devices the app may use -- instead of letting the kernel answer them
// with every host device (`rdmaproxy run` does: tools/harness/netlink_rdma.h; an embedder
// serving the app's NETLINK_RDMA socket can do the same):
//   RDMA_NLDEV_CMD_GET          dump (every allowed device) or one allowed DEV_INDEX:
//                               libibverbs' device list (find_sysfs_devs_nl(), which gives
//                               ibv_get_device_index() its value), `rdma dev`;
//   RDMA_NLDEV_CMD_PORT_GET     the ports of one allowed DEV_INDEX: `rdma link`;
//   RDMA_NLDEV_CMD_GET_CHARDEV  "uverbs" of an allowed DEV_INDEX, with CHARDEV_NAME the
//                               sandbox's uverbs name (find_uverbs_nl_cb(); the char device
//                               number stays the host's, which is what stat() of the sandbox
//                               node shows under the harness); "rdma_cm" (no DEV_INDEX), as the
//                               host has it (librdmacm's ABI check).
// Anything else -- another device's index, resource tracking, counters, link changes -- is not
// answered here: the harness retypes it so the kernel answers EINVAL, as for a device that
// does not exist.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "abi/result.h"
#include "rdmaproxy/host_rdma_netlink.h"

namespace rxp::proxy {

// An allowed device as RDMA netlink names it.
struct NetlinkDevice {
  uint32_t index = 0;          // RDMA_NLDEV_ATTR_DEV_INDEX, the host's (rdma_cm reports it too)
  std::string sandbox_uverbs;  // what CHARDEV_NAME says to the program
};

enum class AnsweredQuery { kDeviceGet, kPortGet, kUverbsChardev, kRdmaCmChardev };

// Whether `message` (one request, well-formed: FilterRdmaNetlinkRequests checked its length)
// is one the harness answers; nullopt when not.
std::optional<AnsweredQuery> AnswerableQuery(std::span<const std::byte> message,
                                             std::span<const NetlinkDevice> allowed);

using NetlinkDatagram = std::vector<std::byte>;

// What the program receives for `request`, one datagram per receive: `host` (the kernel's
// answer to the same request, datagram by datagram: HostRdmaNetlink::Ask) without the messages
// of devices not in `allowed` (a datagram left empty goes too: nldev_get_dumpit() sends a
// device per datagram, so the program sees the dump of a host with only its devices), with
// CHARDEV_NAME renamed, every message carrying the request's sequence number and every
// NLMSG_ERROR echoing the request's own header. Port ids are left 0 (SetPortId).
Result<std::vector<NetlinkDatagram>> NarrowAnswer(
    AnsweredQuery query, std::span<const std::byte> request,
    const std::vector<NetlinkMessages>& host, std::span<const NetlinkDevice> allowed);

// Sets nlmsg_pid of every message in `datagram`: the receiving socket's port id, which the
// kernel puts in each answer (rdma_nl_unicast(): NETLINK_CB(skb).portid).
void SetPortId(NetlinkDatagram& datagram, uint32_t port_id);

}  // namespace rxp::proxy
