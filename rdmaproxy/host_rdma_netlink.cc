#include "rdmaproxy/host_rdma_netlink.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rxp::proxy {

nlmsghdr NetlinkHeader(std::span<const std::byte> message) {
  nlmsghdr h{};
  std::memcpy(&h, message.data(), std::min(message.size(), sizeof(h)));
  return h;
}

Result<HostRdmaNetlink> HostRdmaNetlink::Open() {
  UniqueFd sock(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA));
  if (!sock) {
    if (errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT)
      return Fail(ENOENT, "the kernel has no RDMA netlink");
    return Fail(errno, "cannot open a NETLINK_RDMA socket: {}", strerror(errno));
  }
  return Adopt(std::move(sock));
}

HostRdmaNetlink HostRdmaNetlink::Adopt(UniqueFd sock) {
  // The kernel answers inside the send (netlink_unicast_kernel()); a second of silence is a
  // lost answer, not a slow one.
  const timeval limit{1, 0};
  (void)setsockopt(sock.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  return HostRdmaNetlink(std::move(sock));
}

Result<std::vector<NetlinkMessages>> HostRdmaNetlink::Ask(std::span<const std::byte> request) {
  if (request.size() < sizeof(nlmsghdr) || NetlinkHeader(request).nlmsg_len != request.size())
    return Fail(EINVAL, "netlink request of {} bytes is not one message", request.size());
  std::vector<std::byte> out(request.begin(), request.end());
  nlmsghdr h = NetlinkHeader(out);
  const bool dump = (h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  const uint32_t seq = seq_++;
  h.nlmsg_seq = seq;
  h.nlmsg_pid = 0;
  std::memcpy(out.data(), &h, sizeof(h));
  uint32_t sentinel = 0;
  if (!dump) {
    sentinel = seq_++;
    nlmsghdr noop{};
    noop.nlmsg_len = NLMSG_HDRLEN;
    noop.nlmsg_type = NLMSG_NOOP;
    noop.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    noop.nlmsg_seq = sentinel;
    const size_t at = NetlinkAlign(out.size());
    out.resize(at + sizeof(noop));
    std::memcpy(out.data() + at, &noop, sizeof(noop));
  }
  if (send(sock_.get(), out.data(), out.size(), 0) < 0)
    return Fail(errno, "netlink send: {}", strerror(errno));
  std::vector<NetlinkMessages> answer;
  std::vector<std::byte> buf;
  for (;;) {
    std::byte head[sizeof(nlmsghdr)];
    const ssize_t whole = recv(sock_.get(), head, sizeof(head), MSG_PEEK | MSG_TRUNC);
    if (whole < 0) return Fail(errno, "netlink recv: {}", strerror(errno));
    buf.resize(std::max<size_t>(static_cast<size_t>(whole), 1));
    const ssize_t n = recv(sock_.get(), buf.data(), buf.size(), 0);
    if (n < 0) return Fail(errno, "netlink recv: {}", strerror(errno));
    const size_t total = static_cast<size_t>(n);
    NetlinkMessages datagram;
    bool done = false;
    for (size_t at = 0; !done && total - at >= sizeof(nlmsghdr);) {
      const nlmsghdr m = NetlinkHeader(std::span(buf).subspan(at));
      if (m.nlmsg_len < sizeof(m) || m.nlmsg_len > total - at)
        return Fail(EPROTO, "netlink: a {}-byte message with {} bytes left", m.nlmsg_len,
                    total - at);
      const auto bytes = std::span(buf).subspan(at, m.nlmsg_len);
      at += std::min<size_t>(NetlinkAlign(m.nlmsg_len), total - at);
      if (!dump && m.nlmsg_seq == sentinel) {
        done = true;
        break;
      }
      if (m.nlmsg_seq != seq) continue;  // a late answer to an earlier request
      datagram.emplace_back(bytes.begin(), bytes.end());
      done = dump && (m.nlmsg_type == NLMSG_DONE || m.nlmsg_type == NLMSG_ERROR);
    }
    if (!datagram.empty()) answer.push_back(std::move(datagram));
    if (done) return answer;
  }
}

Result<void> HostRdmaNetlink::MirrorAckOptions(int program_socket) {
  for (int option : {NETLINK_CAP_ACK, NETLINK_EXT_ACK}) {
    int on = 0;
    socklen_t len = sizeof(on);
    if (getsockopt(program_socket, SOL_NETLINK, option, &on, &len) != 0)
      return Fail(errno, "getsockopt(SOL_NETLINK, {}): {}", option, strerror(errno));
    if (setsockopt(sock_.get(), SOL_NETLINK, option, &on, sizeof(on)) != 0)
      return Fail(errno, "setsockopt(SOL_NETLINK, {}): {}", option, strerror(errno));
  }
  return Ok();
}

std::vector<NetlinkAttribute> NetlinkAttributes(std::span<const std::byte> message) {
  std::vector<NetlinkAttribute> attrs;
  const size_t end = std::min<size_t>(message.size(), NetlinkHeader(message).nlmsg_len);
  size_t at = NLMSG_HDRLEN;
  while (at + sizeof(nlattr) <= end) {
    nlattr a;
    std::memcpy(&a, message.data() + at, sizeof(a));
    if (a.nla_len < sizeof(a) || a.nla_len > end - at) break;
    attrs.push_back({static_cast<uint16_t>(a.nla_type & NLA_TYPE_MASK),
                     message.subspan(at + sizeof(a), a.nla_len - sizeof(a)), at, a.nla_len});
    at += NetlinkAlign(a.nla_len);
  }
  return attrs;
}

}  // namespace rxp::proxy
