// HostRdmaNetlink: a NETLINK_RDMA socket of the proxy's own, to ask the host kernel one
// request at a time and get its whole answer back as raw netlink messages -- what
// QueryHostRdmaDevices parses, and what the harness narrows to the allowed devices before a
// program sees it (netlink_answer.h).
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "abi/result.h"
#include "abi/unique_fd.h"

namespace rxp::proxy {

using NetlinkMessage = std::vector<std::byte>;  // one nlmsghdr and its payload, unpadded
using NetlinkMessages = std::vector<NetlinkMessage>;  // the messages of one datagram

class HostRdmaNetlink {
 public:
  // ENOENT when the kernel has no RDMA netlink (EPROTONOSUPPORT/EAFNOSUPPORT: no RDMA at all).
  static Result<HostRdmaNetlink> Open();
  // The same on a NETLINK_RDMA socket opened elsewhere: the kernel answers a socket with the
  // devices of the network namespace it was created in (ib_enum_all_devs(), behind
  // nldev_get_dumpit(), skips a device rdma_dev_access_netns() denies to sock_net(): in
  // exclusive mode, `rdma system set netns exclusive`, those of other namespaces), so a proxy
  // asks for a program from a socket made in the program's namespace.
  static HostRdmaNetlink Adopt(UniqueFd sock);

  // Sends `request` (one message; its sequence number is replaced by this socket's own) and
  // returns the kernel's answer to it, in order, datagram by datagram as the kernel sent them.
  // A dump (NLM_F_DUMP) ends with its NLMSG_DONE or the NLMSG_ERROR that stops it, both
  // included. Any other request is followed by an acknowledged NLMSG_NOOP of this socket's, so
  // the answer is everything before that acknowledgement: the reply, an NLMSG_ERROR, the
  // request's own acknowledgement (rdma_nl_rcv_skb() handles the two messages in order). Each
  // datagram is read with a buffer of exactly its size, so the kernel keeps sizing dump
  // datagrams as for a reader of a page (netlink_dump(): max_recvmsg_len). Errors: the
  // socket's, EPROTO for an answer that does not parse, EAGAIN when the kernel is silent for a
  // second.
  Result<std::vector<NetlinkMessages>> Ask(std::span<const std::byte> request);

  // The acknowledgement options of the socket whose request this one asks for someone else
  // (`program_socket`, any NETLINK_RDMA socket): NETLINK_CAP_ACK (an error's echo of the
  // request capped to its header) and NETLINK_EXT_ACK (an error's message attributes), so the
  // kernel shapes the answer as it would for that socket (netlink_ack()). Errors: getsockopt's
  // or setsockopt's.
  Result<void> MirrorAckOptions(int program_socket);

 private:
  explicit HostRdmaNetlink(UniqueFd sock) : sock_(std::move(sock)) {}
  UniqueFd sock_;
  uint32_t seq_ = 1;
};

// The nlmsghdr at the start of `message` (zeroed where `message` is shorter than one).
nlmsghdr NetlinkHeader(std::span<const std::byte> message);

// NLMSG_ALIGN and NLA_ALIGN (both 4 bytes), on size_t.
constexpr size_t NetlinkAlign(size_t n) { return (n + 3) & ~size_t{3}; }

// One attribute of a netlink message; nla_type's flag bits dropped.
struct NetlinkAttribute {
  uint16_t type = 0;
  std::span<const std::byte> payload;
  size_t offset = 0;  // of the nlattr header in the message
  size_t length = 0;  // nla_len
};
// Every well-formed attribute after the nlmsghdr of `message`, in order; walking stops at the
// first that does not fit.
std::vector<NetlinkAttribute> NetlinkAttributes(std::span<const std::byte> message);

}  // namespace rxp::proxy
