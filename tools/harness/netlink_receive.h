// NetlinkReceive: a program's receive on its NETLINK_RDMA socket, run by the harness with a
// datagram of its own (netlink_rdma.h: the answer that stands behind a placeholder).
//
// The kernel checks a receive's arguments before it looks at the socket's queue, and some
// receives never look at it. ParseNetlinkReceive reads the call as the kernel would up to that
// point; where the kernel would answer without taking a datagram it returns nullopt, and the
// harness lets the kernel run the call itself, so those answers (EFAULT, EINVAL, EMSGSIZE,
// EOPNOTSUPP, or 0 for an empty read) are the kernel's own and the placeholder stays queued.
// Otherwise DeliverNetlinkReceive writes the datagram as netlink_recvmsg() and the socket
// layer would: the data (truncated to the buffers), MSG_TRUNC, the kernel as the source address
// (move_addr_to_user()), msg_flags and an empty control buffer (____sys_recvmsg()) -- or, for a
// receive the kernel ran and answered with a placeholder (it was blocked when the placeholder
// was queued), over what the kernel wrote, keeping its control messages.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <ctime>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tools/harness/handler.h"
#include "tools/harness/tracee_memory.h"

namespace rxp::harness {

// What a read, readv, recvfrom or recvmsg asks for, read from its arguments.
struct NetlinkReceive {
  int flags = 0;              // recvfrom and recvmsg's flags; 0 for read and readv
  std::vector<iovec> iov;     // where the data goes, at most MAX_RW_COUNT bytes in all
  uint64_t address = 0;       // recvfrom's address or msg_name: where the source goes (0: none)
  uint64_t address_len = 0;   // its length's address: recvfrom's addrlen, &msg->msg_namelen
  uint64_t msghdr = 0;        // recvmsg's msghdr: msg_flags and msg_controllen are written
  size_t control_len = 0;     // recvmsg's msg_controllen: room for control messages
};

// recvmsg's msghdr at `at` read as copy_msghdr_from_user() and import_iovec() read it, with the
// call's `flags`: nullopt where the kernel fails before the queue (as ParseNetlinkReceive).
// recvmmsg reads each entry's this way (___sys_recvmsg()).
std::optional<NetlinkReceive> ParseNetlinkMsghdr(TraceeMemory& memory, uint64_t at, int flags);

// What a recvmmsg asks for: do_recvmmsg() runs ___sys_recvmsg() on each entry in turn, its
// flags without MSG_WAITFORONE (and with MSG_DONTWAIT once one datagram is in, if it had it),
// and writes each result to the entry's msg_len.
struct NetlinkReceiveMany {
  uint64_t vector = 0;   // the mmsghdr array
  uint32_t count = 0;    // vlen
  int flags = 0;         // as passed, MSG_WAITFORONE included
  uint64_t timeout = 0;  // the timespec's address; 0: none
  timespec limit{};      // its value, when there is one
  uint64_t Entry(uint64_t i) const { return vector + i * sizeof(mmsghdr); }
  uint64_t LengthOf(uint64_t i) const { return Entry(i) + offsetof(mmsghdr, msg_len); }
};

// nullopt where the kernel fails the call before it looks at the socket: MSG_CMSG_COMPAT
// (EINVAL), an unreadable timeout (EFAULT: __sys_recvmmsg()), an invalid one (EINVAL:
// poll_select_set_timeout()). Entries are read one by one, as the kernel reaches them.
std::optional<NetlinkReceiveMany> ParseNetlinkReceiveMany(const SyscallView& call,
                                                          TraceeMemory& memory);

// nullopt when the kernel answers the call without taking a datagram off the queue: its
// arguments fail the checks that come first (an unreadable msghdr or iovec array, more than
// UIO_MAXIOV iovecs, a negative length, a buffer outside user space, a negative msg_namelen,
// MSG_CMSG_COMPAT), MSG_OOB (netlink_recvmsg() refuses it first), or a read or readv of no
// bytes (sock_read_iter(), do_iter_readv_writev() return 0 untouched). recvmmsg is not one
// (ParseNetlinkReceiveMany).
std::optional<NetlinkReceive> ParseNetlinkReceive(const SyscallView& call, TraceeMemory& memory);

// Whose control messages a delivered receive carries.
enum class ReceiveControl {
  kNone,    // the harness took the placeholder itself: no control bytes (msg_controllen 0)
  kKernel,  // the kernel delivered the placeholder (the receive ran): its control messages
            // (SO_PASSCRED, NETLINK_PKTINFO of a kernel-sent datagram) and MSG_CTRUNC stand
};

// Writes `datagram` as the call's received datagram, taken off the queue already (or peeked);
// the call's result: the bytes copied, the whole length with MSG_TRUNC, or -errno (EFAULT for
// a buffer or address that faults, EINVAL for a negative address length).
long DeliverNetlinkReceive(const NetlinkReceive& receive, std::span<const std::byte> datagram,
                           TraceeMemory& memory, ReceiveControl control = ReceiveControl::kNone);

// The first bytes of what a receive that returned `result` left in its buffers (at most
// `out.size()`); how many were read back (0 when its buffers fault now).
size_t ReadReceived(const NetlinkReceive& receive, long result, std::span<std::byte> out,
                    TraceeMemory& memory);

}  // namespace rxp::harness
