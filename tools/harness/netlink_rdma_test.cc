#include "tools/harness/netlink_rdma.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <catch2/catch.hpp>
#include <array>
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

TEST_CASE("a request the harness answers reaches the kernel as a silent NOOP", "[netlink_rdma]") {
  const uint16_t get = Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
  const uint16_t res = Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
  std::vector<std::byte> req;
  Append(req, get, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, 1);
  Append(req, res, NLM_F_REQUEST | NLM_F_DUMP, 2);
  std::vector<uint16_t> asked;
  auto out = FilterRdmaNetlinkRequests(
      req, [&](std::span<const std::byte> m) -> std::optional<std::vector<NetlinkDatagram>> {
        asked.push_back(HeaderAt({m.begin(), m.end()}, 0).nlmsg_type);
        if (HeaderAt({m.begin(), m.end()}, 0).nlmsg_type != get) return std::nullopt;
        return std::vector<NetlinkDatagram>{NetlinkDatagram(20), NetlinkDatagram(36)};
      });
  REQUIRE(out.ok());
  CHECK(asked == std::vector<uint16_t>{get, res});
  CHECK(out->bytes.size() == req.size());
  const nlmsghdr first = HeaderAt(out->bytes, 0);
  CHECK(first.nlmsg_type == NLMSG_NOOP);
  CHECK((first.nlmsg_flags & NLM_F_ACK) == 0);  // rdma_nl_rcv_skb() then says nothing
  CHECK(first.nlmsg_seq == 1);
  CHECK(HeaderAt(out->bytes, NLMSG_HDRLEN).nlmsg_type != res);  // refused: retyped
  CHECK(out->answered == std::vector<std::string>{"RDMA_NLDEV_CMD_GET"});
  CHECK(out->refused == std::vector<std::string>{"RDMA_NLDEV_CMD_RES_QP_GET"});
  REQUIRE(out->answers.size() == 2);
  CHECK(out->answers[1].size() == 36);
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

// The handler against a stand-in tracee: this process's own memory, and a scratch buffer of
// its own (the tracer's part -- read-only mapping, exit stop, register restore -- is
// tracer_test.cc's and the VM suite's `netlink` case's).
class LocalMemory final : public TraceeMemory {
 public:
  Result<size_t> ReadSome(uint64_t addr, std::span<std::byte> buf) override {
    if (addr == 0) return Fail(EFAULT, "null");
    std::memcpy(buf.data(), reinterpret_cast<const void*>(addr), buf.size());
    return buf.size();
  }
  Result<void> Write(uint64_t addr, std::span<const std::byte> buf) override {
    std::memcpy(reinterpret_cast<void*>(addr), buf.data(), buf.size());
    return Ok();
  }
};

class LocalTracee final : public TraceeAccess {
 public:
  TraceeMemory& memory() override { return memory_; }
  Result<uint64_t> Scratch(size_t size) override {
    if (size > scratch.size()) return Fail(E2BIG, "scratch");
    return reinterpret_cast<uint64_t>(scratch.data());
  }
  Result<uint64_t> KernelScratch(size_t size) override { return Scratch(size); }
  std::optional<std::pair<uint64_t, uint64_t>> ScratchRegion() override { return std::nullopt; }
  ProxiedFileHandler* HandlerOf(int) override { return nullptr; }
  Result<int> AdoptFd(int, std::unique_ptr<ProxiedFileHandler>, std::string) override {
    return Fail(ENOSYS, "not here");
  }
  alignas(8) std::array<std::byte, 16384> scratch{};

 private:
  LocalMemory memory_;
};

uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

SyscallView Call(long nr, std::array<uint64_t, 6> args) {
  return SyscallView{1, 1, nr, args, static_cast<int>(args[0])};
}

struct HandlerFixture {
  Log log{nullptr, nullptr};
  NetlinkRdmaHandler handler{log};
  LocalTracee tracee;
  std::vector<std::byte> get = [] {
    std::vector<std::byte> m;
    Append(m, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, 9);
    return m;
  }();
  // The message the kernel would read at `addr`.
  nlmsghdr KernelSees(uint64_t addr) {
    nlmsghdr h;
    std::memcpy(&h, reinterpret_cast<const void*>(addr), sizeof(h));
    return h;
  }
};

constexpr uint16_t kRetyped = Type(RDMA_NL_NLDEV, 1023);

TEST_CASE("write and sendto hand the kernel the filtered copy", "[netlink_rdma]") {
  HandlerFixture f;
  for (long nr : {long{SYS_write}, long{SYS_sendto}}) {
    // sendto with an address pointer and length 0 has no address: the default peer.
    sockaddr_nl kernel{AF_NETLINK, 0, 0, 0};
    EntryDecision d = f.handler.OnEntry(
        Call(nr, {768, Addr(f.get.data()), f.get.size(), 0, Addr(&kernel), 0}), f.tracee);
    REQUIRE(d.kind() == EntryDecision::Kind::kAllow);
    REQUIRE(d.new_args()[1].has_value());
    CHECK(f.KernelSees(*d.new_args()[1]).nlmsg_type == kRetyped);
    CHECK(f.KernelSees(*d.new_args()[1]).nlmsg_seq == 9);
    CHECK_FALSE(d.new_args()[4].has_value());
    CHECK(f.KernelSees(Addr(f.get.data())).nlmsg_type == Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET));
  }
  // With an address: checked and copied too.
  sockaddr_nl kernel{AF_NETLINK, 0, 0, 0};
  EntryDecision d = f.handler.OnEntry(
      Call(SYS_sendto, {768, Addr(f.get.data()), f.get.size(), 0, Addr(&kernel), sizeof(kernel)}),
      f.tracee);
  REQUIRE(d.new_args()[4].has_value());
  CHECK(*d.new_args()[4] != Addr(&kernel));
  sockaddr_nl peer{AF_NETLINK, 0, 4242, 0};
  d = f.handler.OnEntry(
      Call(SYS_sendto, {768, Addr(f.get.data()), f.get.size(), 0, Addr(&peer), sizeof(peer)}),
      f.tracee);
  CHECK(d.kind() == EntryDecision::Kind::kDeny);
  CHECK(d.result() == -EPERM);
  d = f.handler.OnEntry(Call(SYS_sendto, {768, Addr(f.get.data()), f.get.size(), 0, Addr(&kernel), 6}),
                        f.tracee);
  CHECK(d.result() == -EINVAL);
  d = f.handler.OnEntry(Call(SYS_write, {768, Addr(f.get.data()), 9000, 0, 0, 0}), f.tracee);
  CHECK(d.result() == -EMSGSIZE);
  d = f.handler.OnEntry(Call(SYS_write, {768, 0, f.get.size(), 0, 0, 0}), f.tracee);
  CHECK(d.kind() == EntryDecision::Kind::kEmulate);
  CHECK(d.result() == -EFAULT);
}

TEST_CASE("sendmsg is gathered into one filtered copy with its own header", "[netlink_rdma]") {
  HandlerFixture f;
  std::vector<std::byte> two;
  Append(two, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST, 1);
  Append(two, Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, 2);
  // Split across three iovecs, mid-header.
  iovec iov[3] = {{two.data(), 10}, {two.data() + 10, 12}, {two.data() + 22, two.size() - 22}};
  sockaddr_nl kernel{AF_NETLINK, 0, 0, 0};
  msghdr m{};
  m.msg_name = &kernel;
  m.msg_namelen = sizeof(kernel);
  m.msg_iov = iov;
  m.msg_iovlen = 3;
  EntryDecision d = f.handler.OnEntry(Call(SYS_sendmsg, {768, Addr(&m), 0, 0, 0, 0}), f.tracee);
  REQUIRE(d.kind() == EntryDecision::Kind::kAllow);
  REQUIRE(d.new_args()[1].has_value());
  msghdr seen;
  std::memcpy(&seen, reinterpret_cast<const void*>(*d.new_args()[1]), sizeof(seen));
  REQUIRE(seen.msg_iovlen == 1);
  CHECK(seen.msg_name != &kernel);
  CHECK(seen.msg_namelen == sizeof(kernel));
  CHECK(seen.msg_iov->iov_len == two.size());
  const uint64_t data = Addr(seen.msg_iov->iov_base);
  CHECK(f.KernelSees(data).nlmsg_type == Type(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET));
  CHECK(f.KernelSees(data + 16).nlmsg_type == kRetyped);

  msghdr with_control = m;
  char control[32] = {};
  with_control.msg_control = control;
  with_control.msg_controllen = sizeof(control);
  CHECK(f.handler.OnEntry(Call(SYS_sendmsg, {768, Addr(&with_control), 0, 0, 0, 0}), f.tracee)
            .result() == -EOPNOTSUPP);
  msghdr short_name = m;
  short_name.msg_namelen = 4;
  CHECK(f.handler.OnEntry(Call(SYS_sendmsg, {768, Addr(&short_name), 0, 0, 0, 0}), f.tracee)
            .result() == -EINVAL);
}

TEST_CASE("groups, peers and sends around the filter are refused", "[netlink_rdma]") {
  HandlerFixture f;
  sockaddr_nl groups{AF_NETLINK, 0, 0, 1u << (RDMA_NL_GROUP_LS - 1)};
  CHECK(f.handler.OnEntry(Call(SYS_bind, {768, Addr(&groups), sizeof(groups), 0, 0, 0}), f.tracee)
            .result() == -EPERM);
  sockaddr_nl plain{AF_NETLINK, 0, 0, 0};
  EntryDecision bind = f.handler.OnEntry(Call(SYS_bind, {768, Addr(&plain), sizeof(plain), 0, 0, 0}), f.tracee);
  CHECK(bind.kind() == EntryDecision::Kind::kAllow);
  CHECK(bind.new_args()[1].has_value());  // the kernel reads the checked copy
  sockaddr_nl peer{AF_NETLINK, 0, 4242, 0};
  CHECK(f.handler.OnEntry(Call(SYS_connect, {768, Addr(&peer), sizeof(peer), 0, 0, 0}), f.tracee)
            .result() == -EPERM);
  CHECK(f.handler.OnEntry(Call(SYS_setsockopt, {768, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 0, 4, 0}),
                          f.tracee).result() == -EPERM);
  CHECK(f.handler.OnEntry(Call(SYS_setsockopt, {768, SOL_SOCKET, SO_RCVBUF, 0, 4, 0}), f.tracee)
            .kind() == EntryDecision::Kind::kAllow);
  for (long nr : {long{SYS_writev}, long{SYS_pwritev2}, long{SYS_sendmmsg}, long{SYS_sendfile},
                  long{SYS_splice}})
    CHECK(f.handler.OnEntry(Call(nr, {768, 0, 0, 0, 0, 0}), f.tracee).result() == -EOPNOTSUPP);
  EntryDecision read = f.handler.OnEntry(Call(SYS_read, {768, 0, 0, 0, 0, 0}), f.tracee);
  CHECK(read.kind() == EntryDecision::Kind::kAllow);
  CHECK_FALSE(read.inspect_exit());
}

}  // namespace
}  // namespace rxp::harness
