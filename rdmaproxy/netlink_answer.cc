#include "rdmaproxy/netlink_answer.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace rxp::proxy {
namespace {

void PutHeader(std::vector<std::byte>& m, size_t at, const nlmsghdr& h) {
  std::memcpy(m.data() + at, &h, sizeof(h));
}

const NetlinkAttribute* Find(const std::vector<NetlinkAttribute>& attrs, uint16_t type) {
  // The kernel's nlmsg_parse() keeps the last attribute of a type.
  const NetlinkAttribute* found = nullptr;
  for (const NetlinkAttribute& a : attrs)
    if (a.type == type) found = &a;
  return found;
}

std::optional<uint32_t> U32(const std::vector<NetlinkAttribute>& attrs, uint16_t type) {
  const NetlinkAttribute* a = Find(attrs, type);
  if (a == nullptr || a->payload.size() < sizeof(uint32_t)) return std::nullopt;
  uint32_t v;
  std::memcpy(&v, a->payload.data(), sizeof(v));
  return v;
}

// An NLA_NUL_STRING as nla_strscpy() reads it: up to the first NUL.
std::optional<std::string_view> String(const std::vector<NetlinkAttribute>& attrs,
                                       uint16_t type) {
  const NetlinkAttribute* a = Find(attrs, type);
  if (a == nullptr) return std::nullopt;
  std::string_view s(reinterpret_cast<const char*>(a->payload.data()), a->payload.size());
  return s.substr(0, s.find('\0'));
}

const NetlinkDevice* Allowed(std::optional<uint32_t> index,
                             std::span<const NetlinkDevice> allowed) {
  if (!index) return nullptr;
  for (const NetlinkDevice& d : allowed)
    if (d.index == *index) return &d;
  return nullptr;
}

// `message` with its CHARDEV_NAME attributes holding `name` instead.
std::vector<std::byte> WithChardevName(std::span<const std::byte> message, std::string_view name) {
  std::vector<std::byte> out(message.begin(), message.begin() + NLMSG_HDRLEN);
  for (const NetlinkAttribute& a : NetlinkAttributes(message)) {
    const size_t at = out.size();
    if (a.type == RDMA_NLDEV_ATTR_CHARDEV_NAME) {
      const nlattr h{static_cast<uint16_t>(sizeof(nlattr) + name.size() + 1),
                     RDMA_NLDEV_ATTR_CHARDEV_NAME};
      out.resize(at + NetlinkAlign(h.nla_len));
      std::memcpy(out.data() + at, &h, sizeof(h));
      std::memcpy(out.data() + at + sizeof(h), name.data(), name.size());
    } else {
      out.resize(at + NetlinkAlign(a.length));
      std::memcpy(out.data() + at, message.data() + a.offset, a.length);
    }
  }
  nlmsghdr h = NetlinkHeader(out);
  h.nlmsg_len = static_cast<uint32_t>(out.size());
  PutHeader(out, 0, h);
  return out;
}

void Append(NetlinkDatagram& datagram, std::span<const std::byte> message) {
  const size_t at = NetlinkAlign(datagram.size());
  datagram.resize(at + message.size());
  std::memcpy(datagram.data() + at, message.data(), message.size());
}

}  // namespace

std::optional<AnsweredQuery> AnswerableQuery(std::span<const std::byte> message,
                                             std::span<const NetlinkDevice> allowed) {
  if (message.size() < NLMSG_HDRLEN) return std::nullopt;
  const nlmsghdr h = NetlinkHeader(message);
  // rdma_nl_rcv_skb() handles requests only; anything else it merely acknowledges.
  if ((h.nlmsg_flags & NLM_F_REQUEST) == 0) return std::nullopt;
  if (RDMA_NL_GET_CLIENT(h.nlmsg_type) != RDMA_NL_NLDEV) return std::nullopt;
  const bool dump = (h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  const auto attrs = NetlinkAttributes(message);
  const NetlinkDevice* device = Allowed(U32(attrs, RDMA_NLDEV_ATTR_DEV_INDEX), allowed);
  switch (RDMA_NL_GET_OP(h.nlmsg_type)) {
    case RDMA_NLDEV_CMD_GET:
      // nldev_get_dumpit() lists every device; nldev_get_doit() needs DEV_INDEX.
      if (dump || device != nullptr) return AnsweredQuery::kDeviceGet;
      return std::nullopt;
    case RDMA_NLDEV_CMD_PORT_GET:
      // Both nldev_port_get_doit() and nldev_port_get_dumpit() need DEV_INDEX.
      if (device != nullptr) return AnsweredQuery::kPortGet;
      return std::nullopt;
    case RDMA_NLDEV_CMD_GET_CHARDEV: {
      // nldev_get_chardev() has no dump: a dump request is the kernel's EINVAL.
      if (dump) return std::nullopt;
      const auto type = String(attrs, RDMA_NLDEV_ATTR_CHARDEV_TYPE);
      if (type == "uverbs" && device != nullptr) return AnsweredQuery::kUverbsChardev;
      if (type == "rdma_cm" && !Find(attrs, RDMA_NLDEV_ATTR_DEV_INDEX))
        return AnsweredQuery::kRdmaCmChardev;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

Result<std::vector<NetlinkDatagram>> NarrowAnswer(
    AnsweredQuery query, std::span<const std::byte> request,
    const std::vector<NetlinkMessages>& host, std::span<const NetlinkDevice> allowed) {
  if (request.size() < NLMSG_HDRLEN)
    return Fail(EINVAL, "netlink request of {} bytes", request.size());
  const nlmsghdr asked = NetlinkHeader(request);
  const NetlinkDevice* device =
      Allowed(U32(NetlinkAttributes(request), RDMA_NLDEV_ATTR_DEV_INDEX), allowed);
  // One host message as the program gets it; nullopt when it does not.
  using Narrowed = std::optional<std::vector<std::byte>>;
  const auto narrow = [&](const NetlinkMessage& m) -> Result<Narrowed> {
    if (m.size() < NLMSG_HDRLEN || NetlinkHeader(m).nlmsg_len != m.size())
      return Fail(EPROTO, "the host's answer has a malformed {}-byte message", m.size());
    std::vector<std::byte> out = m;
    const nlmsghdr h = NetlinkHeader(m);
    if (h.nlmsg_type == NLMSG_ERROR) {
      // netlink_ack() echoes the request's header (and, for a failure, its payload): the
      // program's own, not the one the harness sent.
      if (out.size() >= NLMSG_HDRLEN + sizeof(int) + sizeof(nlmsghdr))
        PutHeader(out, NLMSG_HDRLEN + sizeof(int), asked);
    } else if (h.nlmsg_type >= NLMSG_MIN_TYPE) {
      // Not always the request's type: nldev_port_get_doit() answers as RDMA_NLDEV_CMD_GET.
      const NetlinkDevice* of =
          Allowed(U32(NetlinkAttributes(m), RDMA_NLDEV_ATTR_DEV_INDEX), allowed);
      switch (query) {
        case AnsweredQuery::kDeviceGet:
        case AnsweredQuery::kPortGet:
          if (of == nullptr) return Narrowed();  // a device the program does not see
          break;
        case AnsweredQuery::kUverbsChardev:
          // nldev_get_chardev()'s reply names no device: the request's DEV_INDEX says which.
          if (device == nullptr) return Narrowed();
          out = WithChardevName(out, device->sandbox_uverbs);
          break;
        case AnsweredQuery::kRdmaCmChardev:
          break;
      }
    } else if (h.nlmsg_type != NLMSG_DONE) {
      return Narrowed();  // nothing else belongs in these answers
    }
    nlmsghdr patched = NetlinkHeader(out);
    patched.nlmsg_seq = asked.nlmsg_seq;
    patched.nlmsg_pid = 0;
    PutHeader(out, 0, patched);
    return Narrowed(std::move(out));
  };
  std::vector<NetlinkDatagram> datagrams;
  for (const NetlinkMessages& host_datagram : host) {
    NetlinkDatagram datagram;
    for (const NetlinkMessage& m : host_datagram) {
      auto out = narrow(m);
      if (!out.ok()) return std::move(out).error();
      if (*out) Append(datagram, **out);
    }
    if (!datagram.empty()) datagrams.push_back(std::move(datagram));
  }
  return datagrams;
}

void SetPortId(NetlinkDatagram& datagram, uint32_t port_id) {
  for (size_t at = 0; datagram.size() - at >= NLMSG_HDRLEN;) {
    nlmsghdr h = NetlinkHeader(std::span(datagram).subspan(at));
    h.nlmsg_pid = port_id;
    PutHeader(datagram, at, h);
    if (h.nlmsg_len < NLMSG_HDRLEN) return;
    at += std::min<size_t>(NetlinkAlign(h.nlmsg_len), datagram.size() - at);
  }
}

}  // namespace rxp::proxy
