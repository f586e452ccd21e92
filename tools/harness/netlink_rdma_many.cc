// recvmmsg on a traced program's NETLINK_RDMA socket (netlink_rdma.h).
//
// do_recvmmsg() is a loop of ___sys_recvmsg() over the entries: each takes the next datagram,
// with MSG_DONTWAIT from the second on if the call had MSG_WAITFORONE; each result goes to the
// entry's msg_len; the loop ends at vlen, at an error (returned only if no datagram was taken,
// else kept in the socket's sk_err for the next receive, EAGAIN aside) or when the timeout has
// passed after a datagram. The harness runs that loop itself while the next datagram is one of
// its placeholders, as Receive() runs a single receive, and hands the rest of the entries to
// the kernel -- the syscall goes on from the first entry not filled, with the flags the loop
// has reached -- as soon as the next datagram is the kernel's own, the socket is empty (the
// kernel blocks or returns EAGAIN as natively), an entry fails its checks (the kernel reports
// them) or has room for control messages (the kernel attaches them: KernelTakesPlaceholder).
// Placeholders the kernel's part takes are answered at the exit, entry by entry.
#include "tools/harness/netlink_rdma.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <utility>

#include "tools/harness/kernel_io_limits.h"
#include "tools/harness/netlink_receive.h"

namespace rxp::harness {
namespace {

// The harness fills at most kUioMaxIov entries in one call; the kernel takes the rest. Only a
// MSG_PEEK can fill more than there are placeholders: it reads the same datagram each time.

// The kernel's internal restart codes (ERESTARTSYS and up) of a receive a signal interrupted:
// not kept for the next receive, whose program would see them as errno 512.
constexpr long kFirstRestartCode = 512;

// What is left of the call's timeout (do_recvmmsg(): end_time less now, 0 once passed).
timespec TimeLeft(const NetlinkReceiveMany& many, std::chrono::steady_clock::time_point started) {
  using namespace std::chrono;
  const nanoseconds limit = seconds(many.limit.tv_sec) + nanoseconds(many.limit.tv_nsec);
  const nanoseconds left = std::max(limit - (steady_clock::now() - started), nanoseconds(0));
  return timespec{static_cast<time_t>(duration_cast<seconds>(left).count()),
                  static_cast<long>((left % seconds(1)).count())};
}

// The call's result once `taken` datagrams are in and the kernel did not write the timeout:
// __sys_recvmmsg() writes what is left of it after any datagram (EFAULT if it cannot).
long Finish(const NetlinkReceiveMany& many, uint32_t taken,
            std::chrono::steady_clock::time_point started, TraceeMemory& memory) {
  if (many.timeout != 0 && taken != 0 &&
      !memory.WriteValue(many.timeout, TimeLeft(many, started)).ok())
    return -EFAULT;
  return taken;
}

}  // namespace

EntryDecision NetlinkRdmaHandler::ReceiveMany(const SyscallView& call, TraceeAccess& tracee) {
  TraceeMemory& memory = tracee.memory();
  const auto many = ParseNetlinkReceiveMany(call, memory);
  if (!many) return EntryDecision::Allow();
  // do_recvmmsg(): the socket's error before any entry, unless it reads the error queue.
  if ((many->flags & MSG_ERRQUEUE) == 0 && pending_error_ != 0)
    return EntryDecision::Emulate(-static_cast<long>(std::exchange(pending_error_, 0)));
  const auto started = std::chrono::steady_clock::now();
  int flags = many->flags & ~MSG_WAITFORONE;
  uint32_t taken = 0;
  long error = 0;  // what ended the harness's part of the loop, if an error did
  bool expired = false;
  while (taken < many->count && taken < kUioMaxIov && !queued_.empty()) {
    auto head = PlaceholderAtHead();
    if (!head.ok()) {
      error = -static_cast<long>(head.error().errnum);
      break;
    }
    if (!*head) break;
    const auto receive = ParseNetlinkMsghdr(memory, many->Entry(taken), flags);
    if (!receive || KernelTakesPlaceholder(*receive)) break;
    long got = TakeAnswer(call, *receive, (*head)->second, memory);
    // put_user() of msg_len; the datagram is gone either way.
    if (got >= 0 && !memory.WriteValue(many->LengthOf(taken), static_cast<uint32_t>(got)).ok())
      got = -EFAULT;
    if (got < 0) {
      error = got;
      break;
    }
    ++taken;
    if ((many->flags & MSG_WAITFORONE) != 0) flags |= MSG_DONTWAIT;
    if (many->timeout != 0) {
      const timespec left = TimeLeft(*many, started);
      if (left.tv_sec == 0 && left.tv_nsec == 0) {
        expired = true;
        break;
      }
    }
  }
  if (taken == 0) {
    if (error != 0) return EntryDecision::Emulate(error);
    // The kernel runs all of it; the placeholders it takes are answered at its exit.
    receiving_many_[call.tid] = ManyInKernel{*many, 0, started};
    return EntryDecision::AllowAndInspect();
  }
  if (error != 0 || expired || taken == many->count) {
    if (error != 0 && error != -EAGAIN) pending_error_ = static_cast<int>(-error);
    const long result = Finish(*many, taken, started, memory);
    log_.Trace("[pid {}] NETLINK_RDMA fd {}: recvmmsg: {} answer{} of the harness's: result {}",
               call.tid, call.fd, taken, taken == 1 ? "" : "s", result);
    return EntryDecision::Emulate(result);
  }
  log_.Trace("[pid {}] NETLINK_RDMA fd {}: recvmmsg: {} answer{} of the harness's, entries {} "
             "on from the kernel", call.tid, call.fd, taken, taken == 1 ? "" : "s", taken);
  receiving_many_[call.tid] = ManyInKernel{*many, taken, started};
  return EntryDecision::AllowAndInspect()
      .WithArg(1, many->Entry(taken))
      .WithArg(2, many->count - taken)
      .WithArg(3, static_cast<uint32_t>(flags));
}

ExitDecision NetlinkRdmaHandler::ReceivedMany(const SyscallView& call, long result,
                                              TraceeAccess& tracee) {
  auto it = receiving_many_.find(call.tid);
  const ManyInKernel state = std::move(it->second);
  receiving_many_.erase(it);
  TraceeMemory& memory = tracee.memory();
  // The entries the kernel filled: any may hold a placeholder (taken behind the kernel's own
  // datagrams, after blocking, or with control messages).
  const int flags = state.call.flags & ~MSG_WAITFORONE;
  for (long i = 0; i < result; ++i) {
    const uint64_t entry = state.first + static_cast<uint64_t>(i);
    const auto receive = ParseNetlinkMsghdr(memory, state.call.Entry(entry), flags);
    const auto length = memory.ReadValue<uint32_t>(state.call.LengthOf(entry));
    if (!receive || !length.ok()) continue;
    const auto answered = AnswerInPlace(call, *receive, *length, memory);
    if (answered && *answered >= 0)
      (void)memory.WriteValue(state.call.LengthOf(entry), static_cast<uint32_t>(*answered));
  }
  if (state.first == 0) return ExitDecision::Keep();
  // The harness took the first entries: natively one call, which returns them all; an error of
  // the rest is the socket's for the next receive, as after any datagram.
  if (result >= 0) return ExitDecision::Replace(state.first + result);
  if (result != -EAGAIN && -result < kFirstRestartCode) pending_error_ = static_cast<int>(-result);
  return ExitDecision::Replace(Finish(state.call, state.first, state.started, memory));
}

}  // namespace rxp::harness
