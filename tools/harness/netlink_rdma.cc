#include "tools/harness/netlink_rdma.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "tools/harness/netlink_receive.h"

namespace rxp::harness {
namespace {

// The one request that reaches the kernel as sent.
constexpr uint16_t kSysGet = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET);
// What every other request becomes: the NLDEV client with the last op its 10-bit field can
// hold, beyond any kernel's RDMA_NLDEV_NUM_OPS (rdma_nl_rcv_msg() answers it -EINVAL).
constexpr uint16_t kRefusedType = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, (1 << 10) - 1);
static_assert(RDMA_NLDEV_NUM_OPS < (1 << 10) - 1);

// The largest send the harness copies: rdma-core's requests are a header and an attribute or
// two; iproute2's `rdma` sends a few hundred bytes at most.
constexpr size_t kMaxSend = 8192;
constexpr size_t kMaxIov = 64;

constexpr struct {
  uint16_t op;
  const char* name;
} kNldevOps[] = {
    {RDMA_NLDEV_CMD_GET, "RDMA_NLDEV_CMD_GET"},
    {RDMA_NLDEV_CMD_SET, "RDMA_NLDEV_CMD_SET"},
    {RDMA_NLDEV_CMD_NEWLINK, "RDMA_NLDEV_CMD_NEWLINK"},
    {RDMA_NLDEV_CMD_DELLINK, "RDMA_NLDEV_CMD_DELLINK"},
    {RDMA_NLDEV_CMD_PORT_GET, "RDMA_NLDEV_CMD_PORT_GET"},
    {RDMA_NLDEV_CMD_SYS_GET, "RDMA_NLDEV_CMD_SYS_GET"},
    {RDMA_NLDEV_CMD_SYS_SET, "RDMA_NLDEV_CMD_SYS_SET"},
    {RDMA_NLDEV_CMD_RES_GET, "RDMA_NLDEV_CMD_RES_GET"},
    {RDMA_NLDEV_CMD_RES_QP_GET, "RDMA_NLDEV_CMD_RES_QP_GET"},
    {RDMA_NLDEV_CMD_RES_CM_ID_GET, "RDMA_NLDEV_CMD_RES_CM_ID_GET"},
    {RDMA_NLDEV_CMD_RES_CQ_GET, "RDMA_NLDEV_CMD_RES_CQ_GET"},
    {RDMA_NLDEV_CMD_RES_MR_GET, "RDMA_NLDEV_CMD_RES_MR_GET"},
    {RDMA_NLDEV_CMD_RES_PD_GET, "RDMA_NLDEV_CMD_RES_PD_GET"},
    {RDMA_NLDEV_CMD_GET_CHARDEV, "RDMA_NLDEV_CMD_GET_CHARDEV"},
    {RDMA_NLDEV_CMD_STAT_SET, "RDMA_NLDEV_CMD_STAT_SET"},
    {RDMA_NLDEV_CMD_STAT_GET, "RDMA_NLDEV_CMD_STAT_GET"},
    {RDMA_NLDEV_CMD_STAT_DEL, "RDMA_NLDEV_CMD_STAT_DEL"},
};

// Answers queued at most: a program that asks without ever reading.
constexpr size_t kMaxQueued = 1024;

// Scratch memory laid out piece by piece, each piece 8-byte aligned.
class ScratchImage {
 public:
  size_t Add(std::span<const std::byte> bytes) {
    const size_t at = (bytes_.size() + 7) & ~size_t{7};
    bytes_.resize(at + bytes.size());
    if (!bytes.empty()) std::memcpy(bytes_.data() + at, bytes.data(), bytes.size());
    return at;
  }
  template <typename T>
  size_t AddValue(const T& value) {
    return Add(std::as_bytes(std::span<const T, 1>(&value, 1)));
  }
  template <typename T>
  void Set(size_t at, const T& value) {
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

// Places `image` in scratch; its base address, or a Deny.
Result<uint64_t> PutInScratch(TraceeAccess& tracee, const ScratchImage& image) {
  auto slot = tracee.Scratch(std::max<size_t>(image.bytes().size(), 1));
  if (!slot.ok()) return std::move(slot).error();
  RXP_TRY(tracee.memory().WriteForced(*slot, image.bytes()));
  return *slot;
}

// A socket address as the program passed it (at most sockaddr_storage, at least a sockaddr_nl:
// the callers check the length first), and its netlink view.
struct NetlinkAddress {
  sockaddr_storage storage{};
  size_t len = 0;
  sockaddr_nl nl{};
  std::span<const std::byte> bytes() const {
    return std::as_bytes(std::span(&storage, 1)).first(len);
  }
};

// nullopt when unreadable (the kernel's EFAULT).
std::optional<NetlinkAddress> ReadAddress(TraceeMemory& memory, uint64_t at, size_t len) {
  NetlinkAddress a;
  a.len = len;
  if (!memory.Read(at, std::as_writable_bytes(std::span(&a.storage, 1)).first(len)).ok())
    return std::nullopt;
  std::memcpy(&a.nl, &a.storage, sizeof(a.nl));
  return a;
}

// A destination a NETLINK_RDMA request may go to: the kernel (pid 0, no group). Natively an
// unprivileged sender gets EPERM for anything else (netlink_sendmsg(): the RDMA kernel socket
// has no NL_CFG_F_NONROOT_SEND).
Result<void> CheckKernelPeer(const sockaddr_nl& a, const char* what) {
  if (a.nl_family == AF_NETLINK && (a.nl_pid != 0 || a.nl_groups != 0))
    return Fail(EPERM, "NETLINK_RDMA {} to port {} groups {:#x}: only the kernel is reachable "
                "under the harness", what, a.nl_pid, a.nl_groups);
  return Ok();
}

// A placeholder is netlink_ack() of a header-only NOOP: the sequence number that names its
// answer is the echoed request's, whose last byte is the 32nd.
constexpr size_t kPlaceholderSeqEnd = sizeof(nlmsghdr) + offsetof(nlmsgerr, msg) +
                                      offsetof(nlmsghdr, nlmsg_seq) + sizeof(uint32_t);

// The bytes a receive's buffers hold.
size_t ReceivedRoom(const NetlinkReceive& receive) {
  size_t room = 0;
  for (const iovec& v : receive.iov) room += v.iov_len;
  return room;
}

}  // namespace

std::string RdmaNetlinkTypeName(uint16_t type) {
  if (type < NLMSG_MIN_TYPE) return fmt::format("netlink control {}", type);
  // RDMA_NL_GET_CLIENT / RDMA_NL_GET_OP, on unsigned values: 6 bits of client, 10 of op.
  const unsigned client = (type >> 10) & 0x3fu;
  const unsigned op = type & 0x3ffu;
  if (client == RDMA_NL_NLDEV)
    for (const auto& row : kNldevOps)
      if (row.op == op) return row.name;
  const char* clients[] = {nullptr, nullptr, "RDMA_NL_IWCM", "RDMA_NL_RSVD", "RDMA_NL_LS",
                           "RDMA_NL_NLDEV"};
  if (client < std::size(clients) && clients[client] != nullptr)
    return fmt::format("{} op {}", clients[client], op);
  return fmt::format("type {:#x}", type);
}

Result<FilteredNetlink> FilterRdmaNetlinkRequests(std::span<const std::byte> request,
                                                  const NetlinkAnswerer& answer) {
  FilteredNetlink out;
  out.bytes.assign(request.begin(), request.end());
  // rdma_nl_rcv_skb(): messages while a header fits; NLMSG_ALIGN between them.
  size_t at = 0;
  while (request.size() - at >= NLMSG_HDRLEN) {
    nlmsghdr h;
    std::memcpy(&h, request.data() + at, sizeof(h));
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > request.size() - at)
      return Fail(EINVAL, "NETLINK_RDMA message at byte {} has length {} ({} bytes left)", at,
                  h.nlmsg_len, request.size() - at);
    // Control messages (NOOP, DONE, ...) are only acknowledged (rdma_nl_rcv_skb()).
    if (h.nlmsg_type >= NLMSG_MIN_TYPE && h.nlmsg_type != kSysGet) {
      auto answers = answer ? answer(request.subspan(at, h.nlmsg_len)) : std::nullopt;
      nlmsghdr retyped = h;
      if (answers) {
        // rdma_nl_rcv_skb() skips a control message and, without NLM_F_ACK, says nothing.
        out.answered.push_back(RdmaNetlinkTypeName(h.nlmsg_type));
        for (NetlinkDatagram& d : *answers) out.answers.push_back(std::move(d));
        retyped.nlmsg_type = NLMSG_NOOP;
        retyped.nlmsg_flags = static_cast<uint16_t>(h.nlmsg_flags & ~NLM_F_ACK);
      } else {
        out.refused.push_back(RdmaNetlinkTypeName(h.nlmsg_type));
        retyped.nlmsg_type = kRefusedType;
      }
      std::memcpy(out.bytes.data() + at, &retyped, sizeof(retyped));
    }
    at += std::min<size_t>(NLMSG_ALIGN(h.nlmsg_len), request.size() - at);
  }
  return out;
}

Result<FilteredNetlink> NetlinkRdmaHandler::Filter(const SyscallView& call,
                                                   std::span<const std::byte> data) {
  NetlinkAnswerer answerer;
  if (devices_ != nullptr && socket_.valid())
    answerer = [this](std::span<const std::byte> m) { return Answer(m); };
  auto filtered = FilterRdmaNetlinkRequests(data, answerer);
  if (!filtered.ok()) return filtered;
  for (const std::string& name : filtered->refused)
    log_.Trace("[pid {}] NETLINK_RDMA fd {}: {} is not forwarded; the kernel answers EINVAL",
               call.tid, call.fd, name);
  for (const std::string& name : filtered->answered)
    log_.Trace("[pid {}] NETLINK_RDMA fd {}: {} is answered for the allowed devices", call.tid,
               call.fd, name);
  staged_.erase(call.tid);
  if (!filtered->answers.empty()) staged_[call.tid] = std::move(filtered->answers);
  return filtered;
}

std::optional<std::vector<NetlinkDatagram>> NetlinkRdmaHandler::Answer(
    std::span<const std::byte> message) {
  const auto query = proxy::AnswerableQuery(message, *devices_);
  if (!query) return std::nullopt;
  if (!host_) {
    auto opened = proxy::HostRdmaNetlink::Open();
    if (!opened.ok()) {
      log_.Error("NETLINK_RDMA: cannot ask the host: {}", opened.error().ToString());
      return std::nullopt;
    }
    host_.emplace(std::move(*opened));
  }
  // An error in the answer is echoed as the program's socket asks for it.
  if (auto mirrored = host_->MirrorAckOptions(socket_.get()); !mirrored.ok())
    log_.Error("NETLINK_RDMA: {}", mirrored.error().ToString());
  auto host = host_->Ask(message);
  if (!host.ok()) {
    log_.Error("NETLINK_RDMA: the host's answer to {}: {}",
               RdmaNetlinkTypeName(proxy::NetlinkHeader(message).nlmsg_type),
               host.error().ToString());
    return std::nullopt;
  }
  auto narrowed = proxy::NarrowAnswer(*query, message, *host, *devices_);
  if (!narrowed.ok() || narrowed->empty()) {
    log_.Error("NETLINK_RDMA: the host's answer to {}: {}",
               RdmaNetlinkTypeName(proxy::NetlinkHeader(message).nlmsg_type),
               narrowed.ok() ? "empty" : narrowed.error().ToString());
    return std::nullopt;
  }
  return std::move(*narrowed);
}

ExitDecision NetlinkRdmaHandler::OnExit(const SyscallView& call, long result,
                                        TraceeAccess& tracee) {
  if (receiving_.contains(call.tid)) return Received(call, result, tracee);
  if (receiving_many_.contains(call.tid)) return ReceivedMany(call, result, tracee);
  auto staged = staged_.find(call.tid);
  if (staged == staged_.end()) return ExitDecision::Keep();
  std::vector<NetlinkDatagram> answers = std::move(staged->second);
  staged_.erase(staged);
  // A send that failed was not read by the kernel: nothing was asked.
  if (result >= 0) QueuePlaceholders(call, std::move(answers));
  return ExitDecision::Keep();
}

void NetlinkRdmaHandler::QueuePlaceholders(const SyscallView& call,
                                           std::vector<NetlinkDatagram> answers) {
  std::vector<std::byte> noops(answers.size() * NLMSG_HDRLEN);
  for (size_t i = 0; i < answers.size(); ++i) {
    nlmsghdr h{};
    h.nlmsg_len = NLMSG_HDRLEN;
    h.nlmsg_type = NLMSG_NOOP;
    h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    h.nlmsg_seq = next_placeholder_++;
    std::memcpy(noops.data() + i * NLMSG_HDRLEN, &h, sizeof(h));
    queued_.emplace_back(h.nlmsg_seq, std::move(answers[i]));
  }
  // Placeholders a receive the harness did not see consumed (none should be) are dropped
  // oldest first rather than kept for ever.
  while (queued_.size() > kMaxQueued) queued_.pop_front();
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(socket_.get(), noops.data(), noops.size(), MSG_DONTWAIT,
             reinterpret_cast<const sockaddr*>(&kernel), sizeof(kernel)) < 0)
    log_.Error("[pid {}] NETLINK_RDMA fd {}: cannot queue the answer: {}", call.tid, call.fd,
               std::strerror(errno));
}

Result<std::optional<std::pair<uint32_t, uint32_t>>> NetlinkRdmaHandler::PlaceholderAtHead() {
  using Head = std::optional<std::pair<uint32_t, uint32_t>>;
  // netlink_ack() of a header-only NOOP: nlmsghdr, error 0, the NOOP's header echoed.
  struct {
    nlmsghdr h;
    nlmsgerr e;
  } ack{};
  const ssize_t n = recv(socket_.get(), &ack, sizeof(ack), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
  if (n < 0 && errno != EAGAIN && errno != EINTR)
    return Fail(errno, "the socket's pending error: {}", std::strerror(errno));
  if (n < static_cast<ssize_t>(sizeof(ack)) || ack.h.nlmsg_type != NLMSG_ERROR ||
      ack.e.error != 0 || ack.e.msg.nlmsg_type != NLMSG_NOOP)
    return Head();
  for (size_t i = 0; i < queued_.size(); ++i)
    if (queued_[i].first == ack.e.msg.nlmsg_seq) {
      // Placeholders before it were consumed unseen: their answers are stale.
      queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(i));
      return Head(std::pair{ack.e.msg.nlmsg_seq, ack.h.nlmsg_pid});
    }
  return Head();
}

ExitDecision NetlinkRdmaHandler::Received(const SyscallView& call, long result,
                                          TraceeAccess& tracee) {
  auto it = receiving_.find(call.tid);
  const NetlinkReceive receive = std::move(it->second);
  receiving_.erase(it);
  const auto answered = AnswerInPlace(call, receive, result, tracee.memory());
  return answered ? ExitDecision::Replace(*answered) : ExitDecision::Keep();
}

std::optional<long> NetlinkRdmaHandler::AnswerInPlace(const SyscallView& call,
                                                      const NetlinkReceive& receive, long result,
                                                      TraceeMemory& memory) {
  if (result <= 0 || queued_.empty()) return std::nullopt;
  // netlink_ack() of a header-only NOOP, as PlaceholderAtHead() peeks it: a read shorter than
  // its sequence number cannot be told apart.
  struct {
    nlmsghdr h;
    nlmsgerr e;
  } ack{};
  const size_t got =
      ReadReceived(receive, result, std::as_writable_bytes(std::span(&ack, 1)), memory);
  if (got < kPlaceholderSeqEnd ||
      ack.h.nlmsg_type != NLMSG_ERROR || ack.e.error != 0 || ack.e.msg.nlmsg_type != NLMSG_NOOP)
    return std::nullopt;
  const auto found = std::find_if(queued_.begin(), queued_.end(), [&](const auto& q) {
    return q.first == ack.e.msg.nlmsg_seq;
  });
  if (found == queued_.end()) return std::nullopt;
  // Placeholders before it were consumed unseen: their answers are stale.
  queued_.erase(queued_.begin(), found);
  NetlinkDatagram answer = queued_.front().second;
  proxy::SetPortId(answer, ack.h.nlmsg_pid);
  if ((receive.flags & MSG_PEEK) == 0) queued_.pop_front();
  const long delivered = DeliverNetlinkReceive(receive, answer, memory, ReceiveControl::kKernel);
  log_.Trace("[pid {}] NETLINK_RDMA fd {}: the harness's {}-byte answer received in place of "
             "its placeholder{}: result {}",
             call.tid, call.fd, answer.size(),
             (receive.flags & MSG_PEEK) != 0 ? " (peeked)" : "", delivered);
  return delivered;
}

bool NetlinkRdmaHandler::KernelTakesPlaceholder(const NetlinkReceive& receive) {
  return receive.control_len != 0 && ReceivedRoom(receive) >= kPlaceholderSeqEnd;
}

long NetlinkRdmaHandler::TakeAnswer(const SyscallView& call, const NetlinkReceive& receive,
                                    uint32_t port, TraceeMemory& memory) {
  NetlinkDatagram answer = queued_.front().second;
  proxy::SetPortId(answer, port);
  // The kernel takes the datagram off the queue now, whatever the copy out does
  // (netlink_recvmsg() frees it either way); a peek leaves it.
  if ((receive.flags & MSG_PEEK) == 0) {
    std::byte discard[64];
    (void)recv(socket_.get(), discard, sizeof(discard), MSG_DONTWAIT);
    queued_.pop_front();
  }
  const long result = DeliverNetlinkReceive(receive, answer, memory);
  log_.Trace("[pid {}] NETLINK_RDMA fd {}: the harness's {}-byte answer received{}: result {}",
             call.tid, call.fd, answer.size(), (receive.flags & MSG_PEEK) != 0 ? " (peeked)" : "",
             result);
  return result;
}

EntryDecision NetlinkRdmaHandler::OnEntry(const SyscallView& call, TraceeAccess& tracee) {
  switch (call.nr) {
    case SYS_write:
    case SYS_sendto:
      return Send(call, tracee);
    case SYS_sendmsg:
      return SendMsg(call, tracee);
    case SYS_read:
    case SYS_readv:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_recvmmsg:
      // Without answers there are no placeholders: every receive is the kernel's.
      if (devices_ == nullptr) return EntryDecision::Allow();
      return call.nr == SYS_recvmmsg ? ReceiveMany(call, tracee) : Receive(call, tracee);
    case SYS_sendmmsg:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_pwritev2:
    case SYS_sendfile:
    case SYS_splice:
      return EntryDecision::Deny(Error{EOPNOTSUPP, fmt::format(
          "NETLINK_RDMA fd {}: vectored, file-to-socket and spliced sends are not proxied; "
          "use send, sendto or sendmsg", call.fd)});
    case SYS_bind:
    case SYS_connect:
      return Address(call, tracee);
    case SYS_setsockopt:
      // Policy, not the kernel's rule (it lets anyone join): the groups carry host traffic
      // (LS path-record queries, IWPM, device events).
      if (static_cast<int>(call.args[1]) == SOL_NETLINK &&
          static_cast<int>(call.args[2]) == NETLINK_ADD_MEMBERSHIP)
        return EntryDecision::Deny(Error{EPERM, fmt::format(
            "NETLINK_RDMA fd {}: joining a multicast group is refused under the harness",
            call.fd)});
      return EntryDecision::Allow();
    default:
      return EntryDecision::Allow();  // pread, pwrite (ESPIPE), ... as the kernel has them
  }
}

// write(fd, buf, len) and sendto(fd, buf, len, flags, addr, addrlen).
EntryDecision NetlinkRdmaHandler::Send(const SyscallView& call, TraceeAccess& tracee) {
  const uint64_t len = call.args[2];
  if (len > kMaxSend)
    return EntryDecision::Deny(Error{EMSGSIZE, fmt::format(
        "NETLINK_RDMA fd {}: a {}-byte send is larger than the harness copies ({})", call.fd,
        len, kMaxSend)});
  std::vector<std::byte> data(len);
  if (len != 0 && !tracee.memory().Read(call.args[1], data).ok())
    return EntryDecision::Emulate(-EFAULT);
  ScratchImage image;
  std::optional<size_t> addr_at;
  // __sys_sendto(): an address only with a pointer and a non-zero length (else the socket's
  // default peer, the kernel); move_addr_to_kernel() refuses more than 128 bytes and
  // netlink_sendmsg() fewer than a sockaddr_nl, both with EINVAL and before the data.
  const uint64_t addrlen = static_cast<uint32_t>(call.args[5]);
  if (call.nr == SYS_sendto && call.args[4] != 0 && addrlen != 0) {
    if (addrlen < sizeof(sockaddr_nl) || addrlen > sizeof(sockaddr_storage))
      return EntryDecision::Deny(Error{EINVAL, fmt::format(
          "NETLINK_RDMA fd {}: sendto address of {} bytes", call.fd, addrlen)});
    const auto addr = ReadAddress(tracee.memory(), call.args[4], addrlen);
    if (!addr) return EntryDecision::Emulate(-EFAULT);
    if (auto peer = CheckKernelPeer(addr->nl, "sendto"); !peer.ok())
      return EntryDecision::Deny(std::move(peer).error());
    addr_at = image.Add(addr->bytes());
  }
  auto filtered = Filter(call, data);
  if (!filtered.ok()) return EntryDecision::Deny(std::move(filtered).error());
  const size_t data_at = image.Add(filtered->bytes);
  auto base = PutInScratch(tracee, image);
  if (!base.ok()) return EntryDecision::Deny(std::move(base).error());
  EntryDecision d = EntryDecision::Allow().WithArg(1, *base + data_at);
  if (addr_at) d.WithArg(4, *base + *addr_at);
  return d;
}

// sendmsg(fd, msg, flags): the message gathered from its iovecs into one, in scratch with a
// copy of the header and the address.
EntryDecision NetlinkRdmaHandler::SendMsg(const SyscallView& call, TraceeAccess& tracee) {
  msghdr m{};
  if (!tracee.memory().Read(call.args[1], std::as_writable_bytes(std::span(&m, 1))).ok())
    return EntryDecision::Emulate(-EFAULT);
  if (m.msg_controllen != 0)
    return EntryDecision::Deny(Error{EOPNOTSUPP, fmt::format(
        "NETLINK_RDMA fd {}: control messages (credentials) are not proxied", call.fd)});
  if (m.msg_iovlen > kMaxIov)
    return EntryDecision::Deny(Error{EMSGSIZE, fmt::format(
        "NETLINK_RDMA fd {}: {} iovecs; the harness copies at most {}", call.fd, m.msg_iovlen,
        kMaxIov)});
  std::vector<iovec> iov(m.msg_iovlen);
  if (!iov.empty() &&
      !tracee.memory().Read(reinterpret_cast<uint64_t>(m.msg_iov), std::as_writable_bytes(std::span(iov))).ok())
    return EntryDecision::Emulate(-EFAULT);
  std::vector<std::byte> data;
  for (const iovec& v : iov) {
    if (v.iov_len > kMaxSend - data.size())
      return EntryDecision::Deny(Error{EMSGSIZE, fmt::format(
          "NETLINK_RDMA fd {}: a send of more than {} bytes is larger than the harness copies",
          call.fd, kMaxSend)});
    const size_t at = data.size();
    data.resize(at + v.iov_len);
    if (v.iov_len != 0 &&
        !tracee.memory().Read(reinterpret_cast<uint64_t>(v.iov_base), std::span(data).subspan(at)).ok())
      return EntryDecision::Emulate(-EFAULT);
  }
  ScratchImage image;
  const size_t header_at = image.AddValue(m);
  size_t addr_at = 0;
  // copy_msghdr_from_user() clamps the address to 128 bytes; netlink_sendmsg() refuses fewer
  // than a sockaddr_nl before reading the data. The length is in the program's memory, where
  // another thread could change it after this check, so the harness refuses that itself.
  m.msg_namelen = std::min<socklen_t>(m.msg_namelen, sizeof(sockaddr_storage));
  if (m.msg_name != nullptr && m.msg_namelen != 0) {
    if (m.msg_namelen < sizeof(sockaddr_nl))
      return EntryDecision::Deny(Error{EINVAL, fmt::format(
          "NETLINK_RDMA fd {}: sendmsg address of {} bytes", call.fd, m.msg_namelen)});
    const auto addr =
        ReadAddress(tracee.memory(), reinterpret_cast<uint64_t>(m.msg_name), m.msg_namelen);
    if (!addr) return EntryDecision::Emulate(-EFAULT);
    if (auto peer = CheckKernelPeer(addr->nl, "sendmsg"); !peer.ok())
      return EntryDecision::Deny(std::move(peer).error());
    addr_at = image.Add(addr->bytes());
  }
  auto filtered = Filter(call, data);
  if (!filtered.ok()) return EntryDecision::Deny(std::move(filtered).error());
  const size_t data_at = image.Add(filtered->bytes);
  const size_t iov_at = image.AddValue(iovec{});
  // Addresses are known once the slot is: lay out, then patch the pointers.
  auto slot = tracee.Scratch(image.bytes().size());
  if (!slot.ok()) return EntryDecision::Deny(std::move(slot).error());
  msghdr copy = m;
  copy.msg_name = m.msg_name != nullptr && m.msg_namelen != 0
                      ? reinterpret_cast<void*>(*slot + addr_at) : m.msg_name;
  copy.msg_iov = reinterpret_cast<iovec*>(*slot + iov_at);
  copy.msg_iovlen = 1;
  image.Set(header_at, copy);
  image.Set(iov_at, iovec{reinterpret_cast<void*>(*slot + data_at), filtered->bytes.size()});
  if (auto w = tracee.memory().WriteForced(*slot, image.bytes()); !w.ok())
    return EntryDecision::Deny(std::move(w).error());
  return EntryDecision::Allow().WithArg(1, *slot + header_at);
}

// bind / connect (fd, addr, addrlen): no multicast group, no other socket as the peer.
EntryDecision NetlinkRdmaHandler::Address(const SyscallView& call, TraceeAccess& tracee) {
  const uint64_t len = static_cast<uint32_t>(call.args[2]);
  // Shorter than a netlink address, or longer than the kernel copies: EINVAL before use.
  if (len < sizeof(sockaddr_nl) || len > sizeof(sockaddr_storage)) return EntryDecision::Allow();
  const auto addr = ReadAddress(tracee.memory(), call.args[1], len);
  if (!addr) return EntryDecision::Emulate(-EFAULT);
  if (call.nr == SYS_bind && addr->nl.nl_groups != 0)
    return EntryDecision::Deny(Error{EPERM, fmt::format(
        "NETLINK_RDMA fd {}: binding to multicast groups {:#x} is refused under the harness",
        call.fd, addr->nl.nl_groups)});
  if (call.nr == SYS_connect)
    if (auto peer = CheckKernelPeer(addr->nl, "connect"); !peer.ok())
      return EntryDecision::Deny(std::move(peer).error());
  // The kernel reads the checked copy, which no thread of the program can change.
  ScratchImage image;
  image.Add(addr->bytes());
  auto base = PutInScratch(tracee, image);
  if (!base.ok()) return EntryDecision::Deny(std::move(base).error());
  return EntryDecision::Allow().WithArg(1, *base);
}

// A receive whose next datagram is a placeholder: the answer in its place, as
// netlink_recvmsg() and ____sys_recvmsg() would deliver it (netlink_receive.h).
EntryDecision NetlinkRdmaHandler::Receive(const SyscallView& call, TraceeAccess& tracee) {
  // A receive the kernel answers without taking a datagram is left to it: the placeholder
  // stays, and so does a pending socket error, which the peek below would take.
  std::optional<NetlinkReceive> receive = ParseNetlinkReceive(call, tracee.memory());
  if (!receive) return EntryDecision::Allow();
  // An error a recvmmsg left (__skb_try_recv_datagram(): sock_error() comes first).
  if (pending_error_ != 0)
    return EntryDecision::Emulate(-static_cast<long>(std::exchange(pending_error_, 0)));
  // Only a receive whose next datagram is a placeholder of the harness's is emulated now.
  std::optional<std::pair<uint32_t, uint32_t>> head;
  if (!queued_.empty()) {
    auto peeked = PlaceholderAtHead();
    if (!peeked.ok()) return EntryDecision::Emulate(-static_cast<long>(peeked.error().errnum));
    head = *peeked;
  }
  // The kernel runs it when it finds none. It may block until another thread's request is
  // answered and then take that answer's placeholder, which is looked at when it returns
  // (Received). So does a recvmsg with room for control messages (SO_PASSCRED's credentials,
  // NETLINK_PKTINFO, ...): it takes the placeholder itself, so that they are the kernel's own,
  // and gets the answer in its place at the exit -- when its buffers hold the placeholder's
  // sequence number, which names the answer; else it is answered now, without control
  // messages.
  if (!head || KernelTakesPlaceholder(*receive)) {
    receiving_[call.tid] = std::move(*receive);
    return EntryDecision::AllowAndInspect();
  }
  return EntryDecision::Emulate(TakeAnswer(call, *receive, head->second, tracee.memory()));
}

}  // namespace rxp::harness
