#include "rdmaproxy/host_rdma_devices.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <algorithm>
#include <map>
#include <span>

#include "abi/unique_fd.h"

namespace rxp::proxy {
namespace {

constexpr uint16_t kNldevGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
constexpr uint16_t kNldevGetChardev = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET_CHARDEV);

size_t Align4(size_t n) { return (n + 3) & ~size_t{3}; }

// A netlink request under construction: header + attributes.
class Request {
 public:
  Request(uint16_t type, uint16_t flags, uint32_t seq) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    h.nlmsg_seq = seq;
    Put(&h, sizeof(h));
  }
  void Attr(uint16_t type, const void* data, size_t len) {
    nlattr a{static_cast<uint16_t>(sizeof(nlattr) + len), type};
    Put(&a, sizeof(a));
    Put(data, len);
    bytes_.resize(Align4(bytes_.size()));
  }
  std::vector<std::byte> Done() {
    const auto len = static_cast<uint32_t>(bytes_.size());
    std::memcpy(bytes_.data(), &len, sizeof(len));  // nlmsg_len is the first member
    return bytes_;
  }

 private:
  void Put(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::byte> bytes_;
};

using Attrs = std::map<uint16_t, std::span<const std::byte>>;

// Sends `request` and calls `on_message` with the attributes of each reply until NLMSG_DONE
// (dumps) or the single answer.
Result<void> Transact(int sock, const std::vector<std::byte>& request, bool dump,
                      const std::function<void(const Attrs&)>& on_message) {
  if (send(sock, request.data(), request.size(), 0) < 0)
    return Fail(errno, "netlink send: {}", strerror(errno));
  std::vector<std::byte> buf(64 * 1024);
  for (;;) {
    const ssize_t n = recv(sock, buf.data(), buf.size(), 0);
    if (n < 0) return Fail(errno, "netlink recv: {}", strerror(errno));
    size_t at = 0;
    while (at + sizeof(nlmsghdr) <= static_cast<size_t>(n)) {
      nlmsghdr h;
      std::memcpy(&h, buf.data() + at, sizeof(h));
      if (h.nlmsg_len < sizeof(h) || at + h.nlmsg_len > static_cast<size_t>(n))
        return Fail(EPROTO, "netlink: truncated message");
      if (h.nlmsg_type == NLMSG_DONE) return Ok();
      if (h.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr e{};
        if (h.nlmsg_len >= sizeof(h) + sizeof(e)) std::memcpy(&e, buf.data() + at + sizeof(h), sizeof(e));
        if (e.error == 0) return Ok();
        return Fail(-e.error, "netlink: the kernel answered {}", strerror(-e.error));
      }
      Attrs attrs;
      size_t a = at + NLMSG_HDRLEN;
      while (a + sizeof(nlattr) <= at + h.nlmsg_len) {
        nlattr na;
        std::memcpy(&na, buf.data() + a, sizeof(na));
        if (na.nla_len < sizeof(na) || a + na.nla_len > at + h.nlmsg_len) break;
        attrs[static_cast<uint16_t>(na.nla_type & NLA_TYPE_MASK)] =
            std::span<const std::byte>(buf.data() + a + sizeof(na), na.nla_len - sizeof(na));
        a += Align4(na.nla_len);
      }
      on_message(attrs);
      at += Align4(h.nlmsg_len);
      if (!dump) return Ok();
    }
  }
}

std::string String(const Attrs& a, uint16_t type) {
  auto it = a.find(type);
  if (it == a.end()) return {};
  std::string s(reinterpret_cast<const char*>(it->second.data()), it->second.size());
  return s.substr(0, s.find('\0'));
}

uint64_t Number(const Attrs& a, uint16_t type) {
  auto it = a.find(type);
  if (it == a.end()) return 0;
  uint64_t v = 0;
  std::memcpy(&v, it->second.data(), std::min(it->second.size(), sizeof(v)));
  return v;
}

}  // namespace

Result<std::vector<HostRdmaDevice>> QueryHostRdmaDevices() {
  UniqueFd sock(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA));
  if (!sock) {
    // No RDMA netlink in this kernel: no RDMA devices either.
    if (errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT) return std::vector<HostRdmaDevice>{};
    return Fail(errno, "cannot open a NETLINK_RDMA socket: {}", strerror(errno));
  }
  std::vector<HostRdmaDevice> devices;
  RXP_TRY(Transact(sock.get(), Request(kNldevGet, NLM_F_DUMP, 1).Done(), true,
                   [&](const Attrs& a) {
                     HostRdmaDevice d;
                     d.index = static_cast<uint32_t>(Number(a, RDMA_NLDEV_ATTR_DEV_INDEX));
                     d.ibdev = String(a, RDMA_NLDEV_ATTR_DEV_NAME);
                     if (!d.ibdev.empty()) devices.push_back(d);
                   }));
  std::vector<HostRdmaDevice> with_uverbs;
  uint32_t seq = 2;
  for (auto& d : devices) {
    Request r(kNldevGetChardev, 0, seq++);
    r.Attr(RDMA_NLDEV_ATTR_DEV_INDEX, &d.index, sizeof(d.index));
    static constexpr char kType[] = "uverbs";
    r.Attr(RDMA_NLDEV_ATTR_CHARDEV_TYPE, kType, sizeof(kType));
    auto res = Transact(sock.get(), r.Done(), false, [&](const Attrs& a) {
      d.uverbs = String(a, RDMA_NLDEV_ATTR_CHARDEV_NAME);
      d.abi_version = Number(a, RDMA_NLDEV_ATTR_CHARDEV_ABI);
      d.dev = Number(a, RDMA_NLDEV_ATTR_CHARDEV);
      d.driver_id = static_cast<uint32_t>(Number(a, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID));
    });
    if (res.ok() && !d.uverbs.empty()) with_uverbs.push_back(d);  // no uverbs: not usable
  }
  return with_uverbs;
}

}  // namespace rxp::proxy
