#include "rdmaproxy/host_rdma_devices.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <algorithm>
#include <map>
#include <span>

#include "rdmaproxy/host_rdma_netlink.h"

namespace rxp::proxy {
namespace {

constexpr uint16_t kNldevGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
constexpr uint16_t kNldevGetChardev = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET_CHARDEV);

// A netlink request under construction: header + attributes.
class Request {
 public:
  // The sequence number is HostRdmaNetlink::Ask's.
  Request(uint16_t type, uint16_t flags) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    bytes_.resize(sizeof(h));
    std::memcpy(bytes_.data(), &h, sizeof(h));
  }
  void Attr(uint16_t type, const void* data, size_t len) {
    nlattr a{static_cast<uint16_t>(sizeof(nlattr) + len), type};
    Put(&a, sizeof(a));
    Put(data, len);
    bytes_.resize(NetlinkAlign(bytes_.size()));
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

// Asks `request` and calls `on_message` with the attributes of each reply (not the closing
// NLMSG_DONE); an NLMSG_ERROR in the answer is the request's failure.
Result<void> Transact(HostRdmaNetlink& nl, const std::vector<std::byte>& request,
                      const std::function<void(const Attrs&)>& on_message) {
  auto answer = nl.Ask(request);
  if (!answer.ok()) return std::move(answer).error();
  for (const NetlinkMessages& datagram : *answer) {
    for (const NetlinkMessage& m : datagram) {
      nlmsghdr h;
      std::memcpy(&h, m.data(), sizeof(h));
      if (h.nlmsg_type == NLMSG_DONE) continue;
      if (h.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr e{};
        std::memcpy(&e, m.data() + NLMSG_HDRLEN, std::min(sizeof(e), m.size() - NLMSG_HDRLEN));
        if (e.error == 0) continue;
        return Fail(-e.error, "netlink: the kernel answered {}", strerror(-e.error));
      }
      Attrs attrs;
      for (const NetlinkAttribute& a : NetlinkAttributes(m)) attrs[a.type] = a.payload;
      on_message(attrs);
    }
  }
  return Ok();
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
  auto nl = HostRdmaNetlink::Open();
  if (!nl.ok()) {
    // No RDMA netlink in this kernel: no RDMA devices either.
    if (nl.error().errnum == ENOENT) return std::vector<HostRdmaDevice>{};
    return std::move(nl).error();
  }
  std::vector<HostRdmaDevice> devices;
  RXP_TRY(Transact(*nl, Request(kNldevGet, NLM_F_DUMP).Done(),
                   [&](const Attrs& a) {
                     HostRdmaDevice d;
                     d.index = static_cast<uint32_t>(Number(a, RDMA_NLDEV_ATTR_DEV_INDEX));
                     d.ibdev = String(a, RDMA_NLDEV_ATTR_DEV_NAME);
                     if (!d.ibdev.empty()) devices.push_back(d);
                   }));
  std::vector<HostRdmaDevice> with_uverbs;
  for (auto& d : devices) {
    Request r(kNldevGetChardev, 0);
    r.Attr(RDMA_NLDEV_ATTR_DEV_INDEX, &d.index, sizeof(d.index));
    static constexpr char kType[] = "uverbs";
    r.Attr(RDMA_NLDEV_ATTR_CHARDEV_TYPE, kType, sizeof(kType));
    auto res = Transact(*nl, r.Done(), [&](const Attrs& a) {
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
