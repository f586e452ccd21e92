// NetlinkRdma: what a traced program's NETLINK_RDMA socket may ask the host kernel.
//
// rdma-core asks RDMA netlink two things (util/rdma_nl.c): the device list
// (RDMA_NLDEV_CMD_GET dump, then GET_CHARDEV per device: find_sysfs_devs_nl()) and whether the
// kernel keeps registered memory across fork (RDMA_NLDEV_CMD_SYS_GET, COPY_ON_FORK:
// get_copy_on_fork(), behind ibv_fork_init() and ibv_is_fork_initialized()). The device list
// names every host device under its host name, so it must not reach the program; the fork
// answer is one host-wide flag, and without it rdma-core takes the kernel for one without
// copy-on-fork: ibv_fork_init() -- which UCX and libfabric call by default -- then
// madvise(MADV_DONTFORK)s every registered buffer, so a forked child no longer sees them, and
// ibv_is_fork_initialized() says ENABLED instead of the native UNNEEDED.
//
// So the socket is the program's own, real NETLINK_RDMA socket (bind, getsockname and every
// receive are the kernel's), but each request it sends goes through FilterRdmaNetlinkRequests
// first: SYS_GET reaches the kernel as sent; every other message is retyped to an RDMA_NLDEV
// operation no kernel has, which the kernel answers with an NLMSG_ERROR of EINVAL carrying the
// request's own sequence number (rdma_nl_rcv_msg(): !is_nl_msg_valid()) -- the answer of a
// kernel without that command, on which libibverbs falls back to /sys
// (find_sysfs_devs()), in the order the harness keeps (ordered_listing.h). The kernel reads a
// validated copy in scratch memory the program cannot write. Sending to another netlink
// socket is refused with EPERM, as the kernel refuses it to an unprivileged program; joining a
// multicast group (the LS channel, where the kernel asks ibacm for the host's path records;
// IWPM; device events) is refused with EPERM as policy: the kernel lets anyone join, and what
// it multicasts is about the host.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "abi/result.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"

namespace rxp::harness {

struct FilteredNetlink {
  std::vector<std::byte> bytes;     // what the kernel is given: same length as the request
  std::vector<std::string> refused;  // the messages retyped, by name ("RDMA_NLDEV_CMD_GET")
};

// The messages of one send, as the kernel will parse them (rdma_nl_rcv_skb()). Errors
// (EINVAL): a message shorter than its header, longer than what is left, or trailing bytes
// that do not make a header -- the kernel would drop them silently; the harness refuses the
// send instead of forwarding what it cannot parse.
Result<FilteredNetlink> FilterRdmaNetlinkRequests(std::span<const std::byte> request);

// "RDMA_NLDEV_CMD_GET", "RDMA_NL_LS op 2", "type 0x1405": for log lines.
std::string RdmaNetlinkTypeName(uint16_t type);

class NetlinkRdmaHandler final : public ProxiedFileHandler {
 public:
  explicit NetlinkRdmaHandler(Log& log) : log_(log) {}
  EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override;
  ExitDecision OnExit(const SyscallView&, long, TraceeAccess&) override {
    return ExitDecision::Keep();
  }
  void OnClose(CloseReason) override {}

 private:
  EntryDecision Send(const SyscallView& call, TraceeAccess& tracee);
  EntryDecision SendMsg(const SyscallView& call, TraceeAccess& tracee);
  EntryDecision Address(const SyscallView& call, TraceeAccess& tracee);
  // The filtered copy of `data` in scratch, for the kernel to read; errors as Deny.
  Result<FilteredNetlink> Filter(const SyscallView& call, std::span<const std::byte> data);
  Log& log_;
};

}  // namespace rxp::harness
