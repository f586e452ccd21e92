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
// So the socket is the program's own, real NETLINK_RDMA socket (bind, getsockname and the
// kernel's answers are the kernel's), but each request it sends goes through
// FilterRdmaNetlinkRequests first:
//   - SYS_GET reaches the kernel as sent;
//   - the device queries of netlink_answer.h (GET, PORT_GET, GET_CHARDEV of an allowed device)
//     are answered by the harness: it asks the host from a netlink socket of its own (made in
//     the program socket's network namespace, whose devices the kernel lists), narrows the
//     answer to the allowed devices and renames their uverbs char devices. The program's
//     message reaches the kernel retyped to an unacknowledged NLMSG_NOOP, which the kernel
//     skips; once the send has succeeded, the harness sends, on its own descriptor of the
//     program's socket, one acknowledged NLMSG_NOOP per answer datagram, so the kernel queues
//     a placeholder (an NLMSG_ERROR of 0) in the program's socket for each: poll, epoll and
//     the socket's order see a datagram exactly where the answer's is. At a receive whose next
//     datagram is such a placeholder, the harness consumes it and emulates the receive with
//     the answer (read, readv, recvfrom, recvmsg: netlink_receive.h, which also leaves to the
//     kernel the receives it answers without taking a datagram; no control messages); a
//     receive that finds none runs in the kernel, and if it returns with a placeholder (it
//     blocked until another thread's request was answered) the answer is written over it,
//     the kernel's control messages kept; a recvmmsg takes the placeholders at the head of the
//     queue from the harness and the rest from the kernel (netlink_rdma_many.cc);
//   - every other message is retyped to an RDMA_NLDEV operation no kernel has, which the kernel
//     answers with an NLMSG_ERROR of EINVAL carrying the request's own sequence number
//     (rdma_nl_rcv_msg(): !is_nl_msg_valid()) -- the answer of a kernel without that command
//     or device. Under `rdmaproxy run --refuse-netlink` the socket is refused instead, and
//     libibverbs lists /sys (find_sysfs_devs()) in the order the harness keeps
//     (ordered_listing.h).
// The kernel reads a validated copy in scratch memory the program cannot write. Sending to
// another netlink socket is refused with EPERM, as the kernel refuses it to an unprivileged
// program; joining a multicast group (the LS channel, where the kernel asks ibacm for the
// host's path records; IWPM; device events) is refused with EPERM as policy: the kernel lets
// anyone join, and what it multicasts is about the host.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "abi/result.h"
#include "abi/unique_fd.h"
#include "rdmaproxy/host_rdma_netlink.h"
#include "rdmaproxy/netlink_answer.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"
#include "tools/harness/netlink_receive.h"

namespace rxp::harness {

using proxy::NetlinkDatagram;
using proxy::NetlinkDevice;

struct FilteredNetlink {
  std::vector<std::byte> bytes;      // what the kernel is given: same length as the request
  std::vector<std::string> refused;  // the messages retyped, by name ("RDMA_NLDEV_CMD_GET")
  std::vector<std::string> answered;        // the messages the harness answers, by name
  std::vector<NetlinkDatagram> answers;     // their answers, in order, a datagram each
};

// The harness's answer to one request message (netlink_answer.h), or nullopt when it does not
// answer it.
using NetlinkAnswerer =
    std::function<std::optional<std::vector<NetlinkDatagram>>(std::span<const std::byte>)>;

// The messages of one send, as the kernel will parse them (rdma_nl_rcv_skb()): SYS_GET kept,
// what `answer` answers retyped to an unacknowledged NLMSG_NOOP, the rest retyped to refused.
// Errors (EINVAL): a message shorter than its header, longer than what is left, or trailing
// bytes that do not make a header -- the kernel would drop them silently; the harness refuses
// the send instead of forwarding what it cannot parse.
Result<FilteredNetlink> FilterRdmaNetlinkRequests(std::span<const std::byte> request,
                                                  const NetlinkAnswerer& answer = {});

// "RDMA_NLDEV_CMD_GET", "RDMA_NL_LS op 2", "type 0x1405": for log lines.
std::string RdmaNetlinkTypeName(uint16_t type);

class NetlinkRdmaHandler final : public ProxiedFileHandler {
 public:
  // Device queries refused (EINVAL), none answered.
  explicit NetlinkRdmaHandler(Log& log) : log_(log) {}
  // Device queries about `devices` answered (an empty list: dumps list no device); `socket` is
  // the tracer's descriptor of the program's socket (tracee_fd_copy.h). `host` is where the
  // host is asked: a socket in the program socket's network namespace; without one, the
  // tracer's own, opened at the first query (the same namespace).
  NetlinkRdmaHandler(Log& log, std::shared_ptr<const std::vector<NetlinkDevice>> devices,
                     UniqueFd socket, std::optional<proxy::HostRdmaNetlink> host = std::nullopt)
      : log_(log), devices_(std::move(devices)), socket_(std::move(socket)),
        host_(std::move(host)) {}
  EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override;
  ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess&) override;
  void OnClose(CloseReason) override {}

 private:
  EntryDecision Send(const SyscallView& call, TraceeAccess& tracee);
  EntryDecision SendMsg(const SyscallView& call, TraceeAccess& tracee);
  EntryDecision Address(const SyscallView& call, TraceeAccess& tracee);
  EntryDecision Receive(const SyscallView& call, TraceeAccess& tracee);
  // A receive the kernel ran: if it took a placeholder, the answer replaces it.
  ExitDecision Received(const SyscallView& call, long result, TraceeAccess& tracee);
  // recvmmsg (netlink_rdma_many.cc): the entries whose datagrams are placeholders at the head
  // of the queue are answered by the harness, the rest by the kernel, its placeholders
  // answered at the exit.
  EntryDecision ReceiveMany(const SyscallView& call, TraceeAccess& tracee);
  ExitDecision ReceivedMany(const SyscallView& call, long result, TraceeAccess& tracee);
  // A receive with room for control messages and for a placeholder's sequence number takes
  // the placeholder in the kernel, so that the control messages are the kernel's own; the
  // answer replaces it at the exit.
  static bool KernelTakesPlaceholder(const NetlinkReceive& receive);
  // The answer behind the placeholder at the head (its port id `port`), delivered to
  // `receive` and taken off the queue unless it peeks; the receive's result.
  long TakeAnswer(const SyscallView& call, const NetlinkReceive& receive, uint32_t port,
                  TraceeMemory& memory);
  // A receive the kernel ran left `result` bytes in its buffers: if they are a placeholder,
  // its answer in their place (ReceiveControl::kKernel); the new result, or nullopt.
  std::optional<long> AnswerInPlace(const SyscallView& call, const NetlinkReceive& receive,
                                    long result, TraceeMemory& memory);
  // The filtered copy of `data`, its answers staged for the send's exit; errors as Deny.
  Result<FilteredNetlink> Filter(const SyscallView& call, std::span<const std::byte> data);
  std::optional<std::vector<NetlinkDatagram>> Answer(std::span<const std::byte> message);
  // Queues a placeholder in the program's socket for each datagram (after its send).
  void QueuePlaceholders(const SyscallView& call, std::vector<NetlinkDatagram> answers);
  // The answer whose placeholder is the next datagram of the socket, with the port id the
  // kernel addressed it to; nullopt when the next one is the kernel's own (or none). An error
  // is the socket's pending one (ENOBUFS after an overrun), which the peek took: the program's
  // receive must report it, as it would have first (__skb_try_recv_datagram(): sock_error()).
  Result<std::optional<std::pair<uint32_t, uint32_t>>> PlaceholderAtHead();

  Log& log_;
  std::shared_ptr<const std::vector<NetlinkDevice>> devices_;  // null: answer nothing
  UniqueFd socket_;
  std::optional<proxy::HostRdmaNetlink> host_;  // given, or opened at the first query
  std::map<pid_t, std::vector<NetlinkDatagram>> staged_;  // by sending thread, until its exit
  std::map<pid_t, NetlinkReceive> receiving_;  // receives the kernel runs, until their exit
  // A recvmmsg the kernel runs from entry `first` on, after the harness answered the ones
  // before it (started: when the call did, for its timeout).
  struct ManyInKernel {
    NetlinkReceiveMany call;
    uint32_t first = 0;
    std::chrono::steady_clock::time_point started;
  };
  std::map<pid_t, ManyInKernel> receiving_many_;
  // An error a recvmmsg met after it had taken a datagram: it returns the datagrams and the
  // socket keeps the error for the next receive (do_recvmmsg(): sk_err). Where the error
  // came from the harness's part of the call, the harness keeps it instead.
  int pending_error_ = 0;
  // Answers whose placeholders are in the socket, oldest first, by the placeholder's
  // sequence number.
  std::deque<std::pair<uint32_t, NetlinkDatagram>> queued_;
  uint32_t next_placeholder_ = 0x52584e00;
};

}  // namespace rxp::harness
