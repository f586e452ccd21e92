#include "tools/harness/netlink_receive.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <fstream>
#include <string>

#include "tools/harness/kernel_io_limits.h"

namespace rxp::harness {
namespace {

// include/linux/socket.h: the kernel's own flag for a 32-bit caller's recvmsg, not in libc's
// headers; a 64-bit caller that passes it gets EINVAL (__sys_recvmsg()).
constexpr int kMsgCmsgCompat = static_cast<int>(0x80000000u);

// The top of user space, TASK_SIZE_MAX: 56-bit with 5-level paging, whose "la57" flag the
// kernel shows only when it runs with it (it clears the feature otherwise), 47-bit without.
uint64_t TaskSizeMax() {
  static const uint64_t limit = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.starts_with("flags"))
        return (" " + line + " ").find(" la57 ") != std::string::npos
                   ? (uint64_t{1} << 56) - 4096
                   : (uint64_t{1} << 47) - 4096;
    return (uint64_t{1} << 47) - 4096;
  }();
  return limit;
}

// access_ok(): the range lies in user space (asm-generic/access_ok.h __access_ok()).
bool InUserSpace(uint64_t addr, uint64_t len) {
  const uint64_t limit = TaskSizeMax();
  return len <= limit && addr <= limit - len;
}

// import_iovec() of `count` iovecs at `at`: nullopt where it fails (EFAULT, EINVAL).
std::optional<std::vector<iovec>> ImportIovecs(TraceeMemory& memory, uint64_t at, uint64_t count) {
  std::vector<iovec> iov(count);
  if (count != 0 && !memory.Read(at, std::as_writable_bytes(std::span(iov))).ok())
    return std::nullopt;
  uint64_t total = 0;
  for (iovec& v : iov) {
    // copy_iovec_from_user(): a length that is negative as an ssize_t is EINVAL.
    if (static_cast<ssize_t>(v.iov_len) < 0) return std::nullopt;
    if (!InUserSpace(reinterpret_cast<uint64_t>(v.iov_base), v.iov_len)) return std::nullopt;
    v.iov_len = std::min<uint64_t>(v.iov_len, kMaxRwCount - total);
    total += v.iov_len;
  }
  return iov;
}

uint64_t Total(const std::vector<iovec>& iov) {
  uint64_t total = 0;
  for (const iovec& v : iov) total += v.iov_len;
  return total;
}

}  // namespace

std::optional<NetlinkReceive> ParseNetlinkMsghdr(TraceeMemory& memory, uint64_t at, int flags) {
  NetlinkReceive r;
  r.flags = flags;
  // __sys_recvmsg(): a 64-bit caller may not pass MSG_CMSG_COMPAT.
  if ((r.flags & (MSG_OOB | kMsgCmsgCompat)) != 0) return std::nullopt;
  // copy_msghdr_from_user(): the header, a negative msg_namelen (unless there is no
  // name), more than UIO_MAXIOV iovecs (EMSGSIZE), then the iovecs.
  msghdr m{};
  if (!memory.Read(at, std::as_writable_bytes(std::span(&m, 1))).ok()) return std::nullopt;
  if (m.msg_name != nullptr && static_cast<int>(m.msg_namelen) < 0) return std::nullopt;
  if (m.msg_iovlen > kUioMaxIov) return std::nullopt;
  auto iov = ImportIovecs(memory, reinterpret_cast<uint64_t>(m.msg_iov), m.msg_iovlen);
  if (!iov) return std::nullopt;
  r.iov = std::move(*iov);
  r.address = reinterpret_cast<uint64_t>(m.msg_name);
  r.address_len = at + offsetof(msghdr, msg_namelen);
  r.msghdr = at;
  r.control_len = m.msg_control != nullptr ? m.msg_controllen : 0;
  return r;
}

std::optional<NetlinkReceive> ParseNetlinkReceive(const SyscallView& call, TraceeMemory& memory) {
  NetlinkReceive r;
  switch (call.nr) {
    case SYS_read: {
      // vfs_read(): access_ok() of the whole count; sock_read_iter(): nothing to read is 0.
      if (call.args[2] == 0 || !InUserSpace(call.args[1], call.args[2])) return std::nullopt;
      r.iov.push_back({reinterpret_cast<void*>(call.args[1]), std::min(call.args[2], kMaxRwCount)});
      return r;
    }
    case SYS_readv: {
      if (call.args[2] > kUioMaxIov) return std::nullopt;
      auto iov = ImportIovecs(memory, call.args[1], call.args[2]);
      // vfs_readv(): no bytes asked for returns 0 before the file is read.
      if (!iov || Total(*iov) == 0) return std::nullopt;
      r.iov = std::move(*iov);
      return r;
    }
    case SYS_recvfrom: {
      r.flags = static_cast<int>(call.args[3]);
      // import_ubuf() clamps first, then checks; netlink_recvmsg() refuses MSG_OOB first.
      const uint64_t len = std::min(call.args[2], kMaxRwCount);
      if (!InUserSpace(call.args[1], len) || (r.flags & MSG_OOB) != 0) return std::nullopt;
      r.iov.push_back({reinterpret_cast<void*>(call.args[1]), len});
      r.address = call.args[4];
      r.address_len = call.args[5];
      return r;
    }
    case SYS_recvmsg:
      return ParseNetlinkMsghdr(memory, call.args[1], static_cast<int>(call.args[2]));
    default:
      return std::nullopt;
  }
}

std::optional<NetlinkReceiveMany> ParseNetlinkReceiveMany(const SyscallView& call,
                                                          TraceeMemory& memory) {
  NetlinkReceiveMany m;
  m.vector = call.args[1];
  m.count = static_cast<uint32_t>(call.args[2]);
  m.flags = static_cast<int>(call.args[3]);
  m.timeout = call.args[4];
  // SYSCALL_DEFINE5(recvmmsg): no MSG_CMSG_COMPAT from a 64-bit caller.
  if ((m.flags & kMsgCmsgCompat) != 0) return std::nullopt;
  if (m.timeout != 0) {
    // get_timespec64(), then timespec64_valid() in poll_select_set_timeout().
    auto limit = memory.ReadValue<timespec>(m.timeout);
    if (!limit.ok() || limit->tv_sec < 0 || limit->tv_nsec < 0 || limit->tv_nsec >= 1000000000L)
      return std::nullopt;
    m.limit = *limit;
  }
  return m;
}

size_t ReadReceived(const NetlinkReceive& receive, long result, std::span<std::byte> out,
                    TraceeMemory& memory) {
  // With MSG_TRUNC the result is the datagram's whole length; the buffers hold what fit.
  size_t want = std::min<size_t>(static_cast<size_t>(std::max(result, 0L)), out.size());
  size_t got = 0;
  for (const iovec& v : receive.iov) {
    const size_t n = std::min<size_t>(v.iov_len, want - got);
    if (n != 0 &&
        !memory.Read(reinterpret_cast<uint64_t>(v.iov_base), out.subspan(got, n)).ok())
      return 0;
    got += n;
  }
  return got;
}

long DeliverNetlinkReceive(const NetlinkReceive& receive, std::span<const std::byte> datagram,
                           TraceeMemory& memory, ReceiveControl control) {
  // netlink_recvmsg(): the copy, then MSG_TRUNC; a fault is its result, the datagram gone.
  size_t copied = 0;
  for (const iovec& v : receive.iov) {
    const size_t n = std::min<size_t>(v.iov_len, datagram.size() - copied);
    if (n != 0 &&
        !memory.Write(reinterpret_cast<uint64_t>(v.iov_base), datagram.subspan(copied, n)).ok())
      return -EFAULT;
    copied += n;
  }
  const bool truncated = copied < datagram.size();
  const long result =
      static_cast<long>((receive.flags & MSG_TRUNC) != 0 ? datagram.size() : copied);

  // move_addr_to_user(): the user's length read, clamped to the address's, negative refused;
  // that much of the address written, then the address's own length.
  if (receive.address != 0) {
    sockaddr_nl kernel{};  // netlink_recvmsg(): the kernel's port 0, no group
    kernel.nl_family = AF_NETLINK;
    const int full = sizeof(kernel);
    auto len = memory.ReadValue<int>(receive.address_len);
    if (!len.ok()) return -EFAULT;
    if (*len < 0) return -EINVAL;
    const size_t put = static_cast<size_t>(std::min(*len, full));
    if (put != 0 &&
        !memory.Write(receive.address, std::as_bytes(std::span(&kernel, 1)).first(put)).ok())
      return -EFAULT;
    if (!memory.WriteValue(receive.address_len, full).ok()) return -EFAULT;
  }
  // ____sys_recvmsg(): msg_flags (the caller's MSG_CMSG_CLOEXEC kept), then no control bytes;
  // or the kernel's flags and control bytes, less the placeholder's MSG_TRUNC.
  if (receive.msghdr != 0) {
    const uint64_t flags_at = receive.msghdr + offsetof(msghdr, msg_flags);
    int msg_flags = (receive.flags & MSG_CMSG_CLOEXEC) | (truncated ? MSG_TRUNC : 0);
    if (control == ReceiveControl::kKernel) {
      auto kernel_flags = memory.ReadValue<int>(flags_at);
      if (!kernel_flags.ok()) return -EFAULT;
      msg_flags = (*kernel_flags & ~MSG_TRUNC) | (truncated ? MSG_TRUNC : 0);
    }
    if (!memory.WriteValue(flags_at, msg_flags).ok()) return -EFAULT;
    const size_t no_control = 0;
    if (control == ReceiveControl::kNone &&
        !memory.WriteValue(receive.msghdr + offsetof(msghdr, msg_controllen), no_control).ok())
      return -EFAULT;
  }
  return result;
}

}  // namespace rxp::harness
