#include "rdmaproxy/netlink_answer.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace rxp::proxy {
namespace {

constexpr uint16_t Nldev(unsigned op) { return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)); }

// A message under construction: header, then attributes, each padded to 4 bytes.
struct Message {
  std::vector<std::byte> bytes;
  Message(uint16_t type, uint16_t flags, uint32_t seq) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    bytes.resize(sizeof(h));
    std::memcpy(bytes.data(), &h, sizeof(h));
  }
  Message& Attr(uint16_t type, const void* data, size_t len) {
    const nlattr a{static_cast<uint16_t>(sizeof(nlattr) + len), type};
    Put(&a, sizeof(a));
    Put(data, len);
    bytes.resize((bytes.size() + 3) & ~size_t{3});
    return *this;
  }
  Message& U32(uint16_t type, uint32_t v) { return Attr(type, &v, sizeof(v)); }
  Message& Str(uint16_t type, const std::string& s) { return Attr(type, s.c_str(), s.size() + 1); }
  Message& Payload(const void* data, size_t len) {
    Put(data, len);
    return *this;
  }
  NetlinkMessage Done() {
    const auto len = static_cast<uint32_t>(bytes.size());
    std::memcpy(bytes.data(), &len, sizeof(len));
    return bytes;
  }

 private:
  void Put(const void* p, size_t n) {
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
  }
};

nlmsghdr HeaderAt(std::span<const std::byte> d, size_t at) {
  nlmsghdr h;
  std::memcpy(&h, d.data() + at, sizeof(h));
  return h;
}

// (type, DEV_INDEX or CHARDEV_NAME) of each message in a datagram.
std::vector<std::string> Describe(const NetlinkDatagram& d) {
  std::vector<std::string> out;
  for (size_t at = 0; d.size() - at >= NLMSG_HDRLEN;) {
    const nlmsghdr h = HeaderAt(d, at);
    std::string line = std::to_string(h.nlmsg_type) + " seq " + std::to_string(h.nlmsg_seq) +
                       " pid " + std::to_string(h.nlmsg_pid);
    for (const auto& a : NetlinkAttributes(std::span(d).subspan(at, h.nlmsg_len))) {
      if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX) {
        uint32_t v;
        std::memcpy(&v, a.payload.data(), sizeof(v));
        line += " index " + std::to_string(v);
      }
      if (a.type == RDMA_NLDEV_ATTR_CHARDEV_NAME)
        line += " name " + std::string(reinterpret_cast<const char*>(a.payload.data()));
    }
    out.push_back(line);
    at += (h.nlmsg_len + 3) & ~size_t{3};
  }
  return out;
}

const std::vector<NetlinkDevice> kAllowed = {{1, "uverbs0"}, {3, "uverbs1"}};

TEST_CASE("the device queries of allowed devices are the sandbox's to answer", "[rdmaproxy][netlink_answer]") {
  using Q = AnsweredQuery;
  const uint16_t req = NLM_F_REQUEST;
  auto ask = [](Message m) { return AnswerableQuery(m.Done(), kAllowed); };
  CHECK(ask(Message(Nldev(RDMA_NLDEV_CMD_GET), req | NLM_F_DUMP, 1)) == Q::kDeviceGet);
  CHECK(ask(Message(Nldev(RDMA_NLDEV_CMD_GET), req, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 3)) == Q::kDeviceGet);
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET), req, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 0)));
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET), req, 1)));  // no index, no dump
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET), NLM_F_DUMP, 1)));  // not a request
  CHECK(ask(Message(Nldev(RDMA_NLDEV_CMD_PORT_GET), req | NLM_F_DUMP, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)) == Q::kPortGet);
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_PORT_GET), req | NLM_F_DUMP, 1)));
  CHECK(ask(Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), req, 1)
                .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs")) == Q::kUverbsChardev);
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), req, 1)
                      .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2)
                      .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs")));
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), req, 1)
                      .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                      .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "umad")));
  CHECK(ask(Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), req, 1)
                .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "rdma_cm")) == Q::kRdmaCmChardev);
  CHECK_FALSE(ask(Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), req | NLM_F_DUMP, 1)
                      .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "rdma_cm")));
  for (unsigned op : {RDMA_NLDEV_CMD_RES_GET, RDMA_NLDEV_CMD_RES_QP_GET, RDMA_NLDEV_CMD_STAT_GET,
                      RDMA_NLDEV_CMD_NEWLINK, RDMA_NLDEV_CMD_SET})
    CHECK_FALSE(ask(Message(Nldev(op), req | NLM_F_DUMP, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)));
  CHECK_FALSE(ask(Message(static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_LS, 2)), req, 1)));
}

TEST_CASE("a device dump keeps the allowed devices, in the kernel's datagrams", "[rdmaproxy][netlink_answer]") {
  const NetlinkMessage request = Message(Nldev(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, 77).Done();
  // nldev_get_dumpit(): a device per datagram, NLMSG_DONE in its own.
  std::vector<NetlinkMessages> host;
  for (uint32_t index : {0u, 1u, 2u, 3u})
    host.push_back({Message(Nldev(RDMA_NLDEV_CMD_GET), NLM_F_MULTI, 5)
                        .U32(RDMA_NLDEV_ATTR_DEV_INDEX, index)
                        .Str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_" + std::to_string(index))
                        .Done()});
  const int zero = 0;
  host.push_back({Message(NLMSG_DONE, NLM_F_MULTI, 5).Payload(&zero, sizeof(zero)).Done()});
  auto out = NarrowAnswer(AnsweredQuery::kDeviceGet, request, host, kAllowed);
  REQUIRE(out.ok());
  std::vector<std::vector<std::string>> got;
  for (const auto& d : *out) got.push_back(Describe(d));
  const std::string get = std::to_string(Nldev(RDMA_NLDEV_CMD_GET));
  CHECK(got == std::vector<std::vector<std::string>>{{get + " seq 77 pid 0 index 1"},
                                                     {get + " seq 77 pid 0 index 3"},
                                                     {std::to_string(NLMSG_DONE) + " seq 77 pid 0"}});
  NetlinkDatagram last = out->back();
  SetPortId(last, 4242);
  CHECK(Describe(last).back() == std::to_string(NLMSG_DONE) + " seq 77 pid 4242");

  // A datagram of several messages keeps the allowed ones, in order.
  auto packed = NarrowAnswer(AnsweredQuery::kDeviceGet, request,
                             {{host[3][0], host[0][0], host[1][0], host[4][0]}}, kAllowed);
  REQUIRE(packed.ok());
  REQUIRE(packed->size() == 1);
  CHECK(Describe(packed->front()) == std::vector<std::string>{get + " seq 77 pid 0 index 3",
                                                              get + " seq 77 pid 0 index 1",
                                                              std::to_string(NLMSG_DONE) + " seq 77 pid 0"});
  // A malformed host message is an error, not an answer.
  NetlinkMessage bad = host[1][0];
  bad.pop_back();
  CHECK(NarrowAnswer(AnsweredQuery::kDeviceGet, request, {{bad}}, kAllowed).error().errnum == EPROTO);
}

TEST_CASE("a uverbs char device is renamed, and errors echo the program's header", "[rdmaproxy][netlink_answer]") {
  const NetlinkMessage request = Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), NLM_F_REQUEST | NLM_F_ACK, 9)
                                            .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 3)
                                            .Str(RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs")
                                            .Done();
  const uint64_t abi = 1;
  std::vector<NetlinkMessages> host = {
      {Message(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV), 0, 2)
           .Attr(RDMA_NLDEV_ATTR_CHARDEV_ABI, &abi, sizeof(abi))
           .Str(RDMA_NLDEV_ATTR_CHARDEV_NAME, "uverbs12")
           .U32(RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, 21)
           .Done()}};
  // The request's acknowledgement, echoing the header the harness sent (its own seq).
  nlmsghdr sent{};
  std::memcpy(&sent, request.data(), sizeof(sent));
  sent.nlmsg_seq = 2;
  const int zero = 0;
  host.push_back({Message(NLMSG_ERROR, NLM_F_CAPPED, 2).Payload(&zero, sizeof(zero)).Payload(&sent, sizeof(sent)).Done()});
  auto out = NarrowAnswer(AnsweredQuery::kUverbsChardev, request, host, kAllowed);
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);  // the reply and the acknowledgement: their own datagrams
  CHECK(Describe((*out)[0]) == std::vector<std::string>{
      std::to_string(Nldev(RDMA_NLDEV_CMD_GET_CHARDEV)) + " seq 9 pid 0 name uverbs1"});
  const auto attrs = NetlinkAttributes((*out)[0]);
  REQUIRE(attrs.size() == 3);  // the other attributes as the host gave them
  CHECK(attrs[2].type == RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID);
  nlmsghdr echoed;
  std::memcpy(&echoed, (*out)[1].data() + NLMSG_HDRLEN + sizeof(int), sizeof(echoed));
  CHECK(echoed.nlmsg_seq == 9);
  CHECK(HeaderAt((*out)[1], 0).nlmsg_seq == 9);

  // A port query answered as RDMA_NLDEV_CMD_GET (nldev_port_get_doit()) is kept; another
  // device's message is not.
  const NetlinkMessage port = Message(Nldev(RDMA_NLDEV_CMD_PORT_GET), NLM_F_REQUEST, 4)
                                         .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                                         .U32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
                                         .Done();
  auto ports = NarrowAnswer(AnsweredQuery::kPortGet, port,
                            {{Message(Nldev(RDMA_NLDEV_CMD_GET), 0, 3).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1).Done(),
                              Message(Nldev(RDMA_NLDEV_CMD_GET), 0, 3).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2).Done()}},
                            kAllowed);
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 1);
  CHECK(Describe(ports->front()).front().ends_with("index 1"));
}

}  // namespace
}  // namespace rxp::proxy
