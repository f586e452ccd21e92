#include "tools/harness/netlink_receive.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <array>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "tools/harness/kernel_io_limits.h"

namespace rxp::harness {
namespace {

// A stand-in tracee whose only mapped memory is a 4 KiB arena of this process: any other
// address faults, as an unmapped page of the program's would.
class ArenaMemory final : public TraceeMemory {
 public:
  uint64_t At(size_t offset) const { return reinterpret_cast<uint64_t>(arena_.data()) + offset; }
  template <typename T>
  uint64_t Put(size_t offset, const T& value) {
    std::memcpy(arena_.data() + offset, &value, sizeof(T));
    return At(offset);
  }
  template <typename T>
  T Get(uint64_t addr) const {
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(addr), sizeof(T));
    return value;
  }
  Result<size_t> ReadSome(uint64_t addr, std::span<std::byte> buf) override {
    if (!Inside(addr, 1)) return Fail(EFAULT, "outside the arena");
    const size_t n = std::min(buf.size(), arena_.size() - (addr - At(0)));
    std::memcpy(buf.data(), reinterpret_cast<const void*>(addr), n);
    return n;
  }
  Result<void> Write(uint64_t addr, std::span<const std::byte> buf) override {
    if (!Inside(addr, buf.size())) return Fail(EFAULT, "outside the arena");
    std::memcpy(reinterpret_cast<void*>(addr), buf.data(), buf.size());
    return Ok();
  }

 private:
  bool Inside(uint64_t addr, size_t len) const {
    return addr >= At(0) && len <= arena_.size() && addr - At(0) <= arena_.size() - len;
  }
  alignas(16) std::array<std::byte, 4096> arena_{};
};

SyscallView Call(long nr, std::array<uint64_t, 6> args) {
  return SyscallView{1, 1, nr, args, static_cast<int>(args[0])};
}

constexpr uint64_t kKernelAddress = 0xffff888000000000;  // the kernel's half
constexpr uint64_t kMsgCmsgCompat = 0x80000000u;  // the kernel's, not in libc's headers

TEST_CASE("receives the kernel answers before its queue are left to it", "[netlink_receive]") {
  ArenaMemory m;
  const uint64_t buf = m.At(1024);
  // read: nothing asked, or a buffer outside user space (vfs_read()'s access_ok()).
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_read, {3, buf, 0, 0, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_read, {3, kKernelAddress, 64, 0, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_read, {3, buf, ~uint64_t{0}, 0, 0, 0}), m));
  // recvfrom clamps its length to MAX_RW_COUNT before access_ok(): a huge one is fine where
  // 2 GiB fit below the top of user space (a low address: this process's stack may lie within
  // 2 GiB of the top, ASan's fake stacks too).
  const uint64_t low = 0x10000000;
  auto from = ParseNetlinkReceive(Call(SYS_recvfrom, {3, low, ~uint64_t{0}, 0, 0, 0}), m);
  REQUIRE(from);
  CHECK(from->iov.at(0).iov_len == kMaxRwCount);
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvfrom, {3, buf, 64, MSG_OOB, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvfrom, {3, kKernelAddress, 64, 0, 0, 0}), m));

  // readv: too many iovecs, an unreadable array, a negative length, a kernel buffer, no bytes.
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, m.At(0), 1025, 0, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, kKernelAddress, 1, 0, 0, 0}), m));
  const uint64_t negative = m.Put(0, iovec{reinterpret_cast<void*>(buf), ~size_t{0}});
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, negative, 1, 0, 0, 0}), m));
  const uint64_t kernel = m.Put(0, iovec{reinterpret_cast<void*>(kKernelAddress), 16});
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, kernel, 1, 0, 0, 0}), m));
  const uint64_t empty = m.Put(0, iovec{reinterpret_cast<void*>(buf), 0});
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, empty, 1, 0, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_readv, {3, empty, 0, 0, 0, 0}), m));

  // recvmsg: an unreadable header, a negative msg_namelen with a name, too many iovecs
  // (EMSGSIZE), MSG_CMSG_COMPAT, MSG_OOB.
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvmsg, {3, kKernelAddress, 0, 0, 0, 0}), m));
  const uint64_t iov = m.Put(0, iovec{reinterpret_cast<void*>(buf), 64});
  msghdr h{};
  h.msg_iov = reinterpret_cast<iovec*>(iov);
  h.msg_iovlen = 1;
  h.msg_name = reinterpret_cast<void*>(m.At(512));
  h.msg_namelen = static_cast<socklen_t>(-1);
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m));
  h.msg_name = nullptr;  // no name: msg_namelen is not looked at
  CHECK(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m));
  h.msg_iovlen = 1025;
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m));
  h.msg_iovlen = 1;
  CHECK_FALSE(
      ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), kMsgCmsgCompat, 0, 0, 0}), m));
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), MSG_OOB, 0, 0, 0}), m));
  // Room for control messages: only with a control buffer (the harness then lets the kernel
  // take the placeholder, so that they are the kernel's own).
  auto no_control = ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m);
  REQUIRE(no_control);
  CHECK(no_control->control_len == 0);
  h.msg_controllen = 64;  // and no buffer
  CHECK(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m)->control_len == 0);
  h.msg_control = reinterpret_cast<void*>(m.At(768));
  CHECK(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m)->control_len == 64);
  h.msg_control = nullptr;
  h.msg_controllen = 0;
  // recvmsg of no bytes still takes a datagram (netlink_recvmsg() runs): not left to the kernel.
  h.msg_iovlen = 0;
  CHECK(ParseNetlinkReceive(Call(SYS_recvmsg, {3, m.Put(256, h), 0, 0, 0, 0}), m));
  CHECK(ParseNetlinkReceive(Call(SYS_recvfrom, {3, buf, 0, 0, 0, 0}), m));
  // recvmmsg has a parser of its own, entry by entry.
  CHECK_FALSE(ParseNetlinkReceive(Call(SYS_recvmmsg, {3, m.At(0), 1, 0, 0, 0}), m));
}

TEST_CASE("recvmmsg is read as do_recvmmsg() reads it, entry by entry", "[netlink_receive]") {
  ArenaMemory m;
  // The call: MSG_CMSG_COMPAT, an unreadable timeout and an invalid one fail before the queue.
  const uint64_t vector = m.At(1024);
  CHECK_FALSE(ParseNetlinkReceiveMany(Call(SYS_recvmmsg, {3, vector, 2, kMsgCmsgCompat, 0, 0}), m));
  CHECK_FALSE(
      ParseNetlinkReceiveMany(Call(SYS_recvmmsg, {3, vector, 2, 0, kKernelAddress, 0}), m));
  for (const timespec bad : {timespec{-1, 0}, timespec{0, -1}, timespec{0, 1000000000L}})
    CHECK_FALSE(ParseNetlinkReceiveMany(Call(SYS_recvmmsg, {3, vector, 2, 0, m.Put(0, bad), 0}), m));
  const uint64_t timeout = m.Put(0, timespec{2, 500});
  auto many = ParseNetlinkReceiveMany(
      Call(SYS_recvmmsg, {3, vector, 2, MSG_WAITFORONE | MSG_PEEK, timeout, 0}), m);
  REQUIRE(many);
  CHECK(many->count == 2);
  CHECK(many->flags == (MSG_WAITFORONE | MSG_PEEK));
  CHECK(many->timeout == timeout);
  CHECK(many->limit.tv_sec == 2);
  CHECK(many->limit.tv_nsec == 500);
  // A vector that does not exist, or no entries, is the loop's business: read as it goes.
  CHECK(ParseNetlinkReceiveMany(Call(SYS_recvmmsg, {3, kKernelAddress, 0, 0, 0, 0}), m));

  // Entries are struct mmsghdr: the msghdr, then msg_len.
  CHECK(many->Entry(1) == vector + sizeof(mmsghdr));
  CHECK(many->LengthOf(1) == vector + sizeof(mmsghdr) + sizeof(msghdr));
  const uint64_t buf = m.At(2048);
  mmsghdr entries[2] = {};
  iovec iov{reinterpret_cast<void*>(buf), 64};
  entries[0].msg_hdr.msg_iov = reinterpret_cast<iovec*>(m.Put(64, iov));
  entries[0].msg_hdr.msg_iovlen = 1;
  entries[1] = entries[0];
  entries[1].msg_hdr.msg_iovlen = 1025;  // EMSGSIZE when the kernel reaches it
  m.Put(1024, entries);
  auto first = ParseNetlinkMsghdr(m, many->Entry(0), MSG_PEEK);
  REQUIRE(first);
  CHECK(first->msghdr == many->Entry(0));
  CHECK(first->flags == MSG_PEEK);
  CHECK(first->iov.at(0).iov_len == 64);
  CHECK_FALSE(ParseNetlinkMsghdr(m, many->Entry(1), 0));
  CHECK_FALSE(ParseNetlinkMsghdr(m, many->Entry(0), MSG_OOB));
}

TEST_CASE("a delivered datagram is truncated, addressed and flagged as the kernel does",
          "[netlink_receive]") {
  ArenaMemory m;
  std::vector<std::byte> datagram(100);
  for (size_t i = 0; i < datagram.size(); ++i) datagram[i] = static_cast<std::byte>(i);
  const uint64_t a = m.At(1024), b = m.At(2048);
  iovec halves[2] = {{reinterpret_cast<void*>(a), 30}, {reinterpret_cast<void*>(b), 30}};
  const uint64_t iov = m.Put(0, halves);
  msghdr h{};
  h.msg_iov = reinterpret_cast<iovec*>(iov);
  h.msg_iovlen = 2;
  h.msg_name = reinterpret_cast<void*>(m.Put(512, sockaddr_nl{AF_NETLINK, 0, 777, 5}));
  h.msg_namelen = 64;  // more than the address: 12 written
  h.msg_controllen = 40;
  const uint64_t msg = m.Put(256, h);

  auto r = ParseNetlinkReceive(Call(SYS_recvmsg, {3, msg, MSG_CMSG_CLOEXEC, 0, 0, 0}), m);
  REQUIRE(r);
  CHECK(DeliverNetlinkReceive(*r, datagram, m) == 60);
  CHECK(m.Get<std::byte>(a + 29) == std::byte{29});
  CHECK(m.Get<std::byte>(b) == std::byte{30});
  const msghdr out = m.Get<msghdr>(msg);
  CHECK(out.msg_flags == (MSG_TRUNC | MSG_CMSG_CLOEXEC));
  CHECK(out.msg_controllen == 0);
  CHECK(out.msg_namelen == sizeof(sockaddr_nl));
  const sockaddr_nl from = m.Get<sockaddr_nl>(reinterpret_cast<uint64_t>(h.msg_name));
  CHECK(from.nl_family == AF_NETLINK);
  CHECK(from.nl_pid == 0);
  CHECK(from.nl_groups == 0);

  // MSG_TRUNC: the whole length; a datagram that fits: no MSG_TRUNC in msg_flags.
  r->flags = MSG_TRUNC;
  CHECK(DeliverNetlinkReceive(*r, datagram, m) == 100);
  CHECK(DeliverNetlinkReceive(*r, std::span(datagram).first(50), m) == 50);
  CHECK(m.Get<msghdr>(msg).msg_flags == 0);

  // recvfrom with a 4-byte address length: 4 bytes of the address, the length set to 12.
  const uint64_t name = m.Put(512, sockaddr_nl{0, 0, 777, 5});
  const uint64_t len = m.Put(600, socklen_t{4});
  auto f = ParseNetlinkReceive(Call(SYS_recvfrom, {3, a, 16, 0, name, len}), m);
  REQUIRE(f);
  CHECK(DeliverNetlinkReceive(*f, datagram, m) == 16);
  CHECK(m.Get<sockaddr_nl>(name).nl_family == AF_NETLINK);
  CHECK(m.Get<sockaddr_nl>(name).nl_pid == 777);  // beyond the 4 bytes asked for
  CHECK(m.Get<socklen_t>(len) == sizeof(sockaddr_nl));
  // After the datagram is taken: a negative length is EINVAL, no length pointer EFAULT, a
  // buffer that faults EFAULT.
  m.Put(600, -1);
  CHECK(DeliverNetlinkReceive(*f, datagram, m) == -EINVAL);
  f = ParseNetlinkReceive(Call(SYS_recvfrom, {3, a, 16, 0, name, 0}), m);
  REQUIRE(f);
  CHECK(DeliverNetlinkReceive(*f, datagram, m) == -EFAULT);
  f = ParseNetlinkReceive(Call(SYS_read, {3, m.At(4090), 16, 0, 0, 0}), m);
  REQUIRE(f);  // in user space, but not mapped past the arena
  CHECK(DeliverNetlinkReceive(*f, datagram, m) == -EFAULT);
  // No address asked for: nothing but the data is written.
  f = ParseNetlinkReceive(Call(SYS_recvfrom, {3, a, 8, 0, 0, len}), m);
  REQUIRE(f);
  m.Put(600, socklen_t{4});
  CHECK(DeliverNetlinkReceive(*f, datagram, m) == 8);
  CHECK(m.Get<socklen_t>(len) == 4);
}

TEST_CASE("a receive the kernel ran keeps its control messages when the answer replaces its "
          "placeholder", "[netlink_receive]") {
  ArenaMemory m;
  std::vector<std::byte> datagram(100);
  for (size_t i = 0; i < datagram.size(); ++i) datagram[i] = static_cast<std::byte>(i);
  const uint64_t a = m.At(1024), b = m.At(2048);
  iovec halves[2] = {{reinterpret_cast<void*>(a), 20}, {reinterpret_cast<void*>(b), 200}};
  const uint64_t iov = m.Put(0, halves);
  msghdr h{};
  h.msg_iov = reinterpret_cast<iovec*>(iov);
  h.msg_iovlen = 2;
  h.msg_control = reinterpret_cast<void*>(m.At(3072));
  h.msg_controllen = 64;
  const uint64_t msg = m.Put(256, h);
  auto r = ParseNetlinkReceive(Call(SYS_recvmsg, {3, msg, 0, 0, 0, 0}), m);
  REQUIRE(r);

  // What the kernel left: a 36-byte placeholder across both buffers, 24 control bytes (a
  // credentials message), MSG_CTRUNC; its MSG_TRUNC (had it been cut) is the placeholder's.
  for (size_t i = 0; i < 36; ++i)
    m.Put(i < 20 ? 1024 + i : 2048 + i - 20, static_cast<uint8_t>(0xa0 + i));
  std::array<std::byte, 36> seen{};
  CHECK(ReadReceived(*r, 36, seen, m) == 36);
  CHECK(seen[19] == std::byte{0xa0 + 19});
  CHECK(seen[20] == std::byte{0xa0 + 20});
  CHECK(ReadReceived(*r, 8, seen, m) == 8);  // no more than the result
  h = m.Get<msghdr>(msg);
  h.msg_controllen = 24;
  h.msg_flags = MSG_CTRUNC | MSG_TRUNC;
  m.Put(256, h);

  CHECK(DeliverNetlinkReceive(*r, datagram, m, ReceiveControl::kKernel) == 100);
  CHECK(m.Get<std::byte>(b + 79) == std::byte{99});
  const msghdr out = m.Get<msghdr>(msg);
  CHECK(out.msg_controllen == 24);
  CHECK(out.msg_flags == MSG_CTRUNC);  // the answer fits: no MSG_TRUNC

  // The harness's own delivery: no control bytes, the kernel's flags not consulted.
  CHECK(DeliverNetlinkReceive(*r, datagram, m) == 100);
  CHECK(m.Get<msghdr>(msg).msg_controllen == 0);
  CHECK(m.Get<msghdr>(msg).msg_flags == 0);
}

}  // namespace
}  // namespace rxp::harness
