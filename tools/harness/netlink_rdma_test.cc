#include "tools/harness/netlink_rdma.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

namespace rxp::harness {
namespace {

constexpr uint16_t Type(unsigned client, unsigned op) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(client, op));
}

// One netlink message as libnl lays it out: header, payload, padding to NLMSG_ALIGN.
void Append(std::vector<std::byte>& out, uint16_t type, uint16_t flags, uint32_t seq,
            size_t payload = 0) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + payload);
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  h.nlmsg_pid = 0;
  const size_t at = out.size();
  out.resize(at + NLMSG_ALIGN(h.nlmsg_len));
  std::memcpy(out.data() + at, &h, sizeof(h));
  for (size_t i = 0; i < payload; ++i) out[at + NLMSG_HDRLEN + i] = std::byte{0xab};
}

nlmsghdr HeaderAt(const std::vector<std::byte>& bytes, size_t at) {
  nlmsghdr h;
  std::memcpy(&h, bytes.data() + at, sizeof(h));
  return h;
}

TEST_CASE("only SYS_GET reaches the kernel as sent", "[netlink_rdma]") {
  const uint16_t sys_get = Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET);
  std::vector<std::byte> req;
  Append(req, sys_get, NLM_F_REQUEST | NLM_F_ACK, 1);
  auto kept = FilterRdmaNetlinkRequests(req);
  REQUIRE(kept.ok());
  CHECK(kept->bytes == req);
  CHECK(kept->refused.empty());

  // What find_sysfs_devs_nl() sends: a GET dump, then GET_CHARDEV with attributes.
  for (uint16_t type : {Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
                        Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET_CHARDEV),
                        Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET),
                        Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK), Type(RDMA_NL_LS, 2),
                        Type(RDMA_NL_IWCM, 1), Type(RDMA_NL_NLDEV, 1023), Type(9, 1)}) {
    std::vector<std::byte> one;
    Append(one, type, NLM_F_REQUEST | NLM_F_DUMP, 7, 12);
    auto out = FilterRdmaNetlinkRequests(one);
    REQUIRE(out.ok());
    REQUIRE(out->bytes.size() == one.size());
    const nlmsghdr h = HeaderAt(out->bytes, 0);
    INFO(RdmaNetlinkTypeName(type));
    // Retyped to an op no kernel has; everything else as sent (the error echoes the seq).
    CHECK(h.nlmsg_type == Type(RDMA_NL_NLDEV, 1023));
    CHECK(h.nlmsg_seq == 7);
    CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_DUMP));
    CHECK(std::equal(out->bytes.begin() + NLMSG_HDRLEN, out->bytes.end(),
                     one.begin() + NLMSG_HDRLEN));
    REQUIRE(out->refused.size() == 1);
    CHECK(out->refused[0] == RdmaNetlinkTypeName(type));
  }
  CHECK(RdmaNetlinkTypeName(Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)) == "RDMA_NLDEV_CMD_GET");
  CHECK(RdmaNetlinkTypeName(Type(RDMA_NL_LS, 2)) == "RDMA_NL_LS op 2");
}

TEST_CASE("every message of a batch is filtered, control messages kept", "[netlink_rdma]") {
  std::vector<std::byte> req;
  Append(req, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST, 1, 3);  // padded
  Append(req, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, 2);
  Append(req, NLMSG_NOOP, 0, 3);
  Append(req, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET), NLM_F_REQUEST, 4, 8);
  auto out = FilterRdmaNetlinkRequests(req);
  REQUIRE(out.ok());
  CHECK(HeaderAt(out->bytes, 0).nlmsg_type == Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET));
  CHECK(HeaderAt(out->bytes, 20).nlmsg_type == Type(RDMA_NL_NLDEV, 1023));
  CHECK(HeaderAt(out->bytes, 36).nlmsg_type == NLMSG_NOOP);
  CHECK(HeaderAt(out->bytes, 52).nlmsg_type == Type(RDMA_NL_NLDEV, 1023));
  CHECK(out->refused == std::vector<std::string>{"RDMA_NLDEV_CMD_GET", "RDMA_NLDEV_CMD_PORT_GET"});
  // Fewer than a header's bytes at the end are ignored, as the kernel ignores them.
  std::vector<std::byte> tail = req;
  tail.resize(tail.size() + 5);
  CHECK(FilterRdmaNetlinkRequests(tail).ok());
  CHECK(FilterRdmaNetlinkRequests({}).ok());
}

TEST_CASE("a message whose length lies is refused, not forwarded", "[netlink_rdma]") {
  std::vector<std::byte> req;
  Append(req, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST, 1);
  Append(req, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_REQUEST, 2);
  auto set_len = [&](size_t at, uint32_t len) {
    std::vector<std::byte> b = req;
    std::memcpy(b.data() + at, &len, sizeof(len));
    return b;
  };
  for (uint32_t bad : {0u, 15u, 33u, 1000u}) {
    INFO(bad);
    auto second = FilterRdmaNetlinkRequests(set_len(16, bad));
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().errnum == EINVAL);
  }
  // A first message that claims the whole batch hides nothing: its length covers the second.
  auto whole = FilterRdmaNetlinkRequests(set_len(0, 32));
  REQUIRE(whole.ok());
  CHECK(whole->refused.empty());
}

}  // namespace
}  // namespace rxp::harness
