// rxp_netlink_probe: what a program's NETLINK_RDMA socket can ask the kernel, in raw netlink
// (no libnl), one line per question, for the suite's `netlink` case to compare a native run
// with one under `rdmaproxy run` (tools/harness/netlink_rdma.h):
//   socket                 ok | errno E
//   sys_get_{sendmsg,sendto,write}  ok copy_on_fork=N | errno E   (RDMA_NLDEV_CMD_SYS_GET)
//   get                    ok devices=N | errno E   (RDMA_NLDEV_CMD_GET dump)
//   get_chardev            ok | errno E             (RDMA_NLDEV_CMD_GET_CHARDEV "uverbs")
//   bind_other, bind_groups, add_membership, sendto_peer, connect_peer, writev, truncated,
//   sendfile, splice, aio_write (and their set-up steps)   ok | errno E
// Natively as root everything succeeds (as another user, sending to or connecting to another
// socket is EPERM); under the harness SYS_GET must give the same answer, the device queries
// EINVAL (the kernel's own answer to the retyped request), and the rest the harness's
// refusals. Exit status 0 unless the socket API itself misbehaves.
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int g_seq = 1;

void Report(const char* what, int err, const char* detail = "") {
  if (err == 0)
    std::printf("%s ok%s%s\n", what, detail[0] != '\0' ? " " : "", detail);
  else
    std::printf("%s errno %s\n", what, strerrorname_np(err));
}

std::vector<char> Message(uint16_t type, uint16_t flags, const void* payload = nullptr,
                          size_t len = 0) {
  std::vector<char> m(NLMSG_ALIGN(NLMSG_HDRLEN + len));
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + len);
  h.nlmsg_type = type;
  h.nlmsg_flags = static_cast<uint16_t>(flags | NLM_F_REQUEST);
  h.nlmsg_seq = static_cast<uint32_t>(g_seq++);
  std::memcpy(m.data(), &h, sizeof(h));
  if (len != 0) std::memcpy(m.data() + NLMSG_HDRLEN, payload, len);
  return m;
}

struct Answer {
  int err = 0;          // NLMSG_ERROR's error, as a positive errno
  int messages = 0;     // data messages of the request's type
  int copy_on_fork = -1;
};

// Reads until NLMSG_DONE, an NLMSG_ERROR or (no dump) the first data message.
Answer Receive(int fd, uint16_t type, bool dump) {
  Answer a;
  std::vector<char> buf(65536);
  for (;;) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      a.err = errno;
      return a;
    }
    // The NLMSG_* and NLA_* macros cast C-style; walk the records by offset instead.
    const size_t total = static_cast<size_t>(n);
    for (size_t at = 0; total - at >= sizeof(nlmsghdr);) {
      nlmsghdr h;
      std::memcpy(&h, buf.data() + at, sizeof(h));
      if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > total - at) break;
      const char* data = buf.data() + at + NLMSG_HDRLEN;
      const size_t data_len = h.nlmsg_len - NLMSG_HDRLEN;
      at += NLMSG_ALIGN(h.nlmsg_len);
      if (h.nlmsg_type == NLMSG_DONE) return a;
      if (h.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr e{};
        std::memcpy(&e, data, std::min(sizeof(e), data_len));
        if (e.error != 0) a.err = -e.error;
        return a;
      }
      if (h.nlmsg_type != type) continue;
      ++a.messages;
      for (size_t off = 0; data_len - off >= sizeof(nlattr);) {
        nlattr attr;
        std::memcpy(&attr, data + off, sizeof(attr));
        if (attr.nla_len < sizeof(nlattr) || attr.nla_len > data_len - off) break;
        if ((attr.nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK && attr.nla_len > sizeof(nlattr))
          a.copy_on_fork = static_cast<uint8_t>(data[off + sizeof(nlattr)]);
        off += NLA_ALIGN(attr.nla_len);
      }
      if (!dump) return a;
    }
  }
}

void Ask(int fd, const char* what, uint16_t op, bool dump, int how,
         const void* payload = nullptr, size_t len = 0) {
  const uint16_t type = static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op));
  std::vector<char> m = Message(type, dump ? NLM_F_DUMP : 0, payload, len);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ssize_t sent;
  if (how == 0) {
    iovec iov{m.data(), m.size()};
    msghdr msg{};
    msg.msg_name = &kernel;
    msg.msg_namelen = sizeof(kernel);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    sent = sendmsg(fd, &msg, 0);
  } else if (how == 1) {
    sent = sendto(fd, m.data(), m.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel));
  } else if (how == 3) {  // an address pointer with length 0: no address, the default peer
    sent = sendto(fd, m.data(), m.size(), 0, reinterpret_cast<sockaddr*>(&kernel), 0);
  } else {
    sent = write(fd, m.data(), m.size());
  }
  if (sent < 0) return Report(what, errno);
  const Answer a = Receive(fd, type, dump);
  char detail[64] = "";
  if (op == RDMA_NLDEV_CMD_SYS_GET) std::snprintf(detail, sizeof(detail), "copy_on_fork=%d", a.copy_on_fork);
  if (op == RDMA_NLDEV_CMD_GET && a.err == 0) std::snprintf(detail, sizeof(detail), "devices=%d", a.messages);
  Report(what, a.err, detail);
}

int Ret(long r) { return r < 0 ? errno : 0; }

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  Report("socket", fd < 0 ? errno : 0);
  if (fd < 0) return 0;
  // A request nobody answers must not hang the probe: recv gives EAGAIN after 5 s.
  const timeval limit{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  Report("bind", Ret(bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local))));

  Ask(fd, "sys_get_sendmsg", RDMA_NLDEV_CMD_SYS_GET, false, 0);
  Ask(fd, "sys_get_sendto", RDMA_NLDEV_CMD_SYS_GET, false, 1);
  Ask(fd, "sys_get_write", RDMA_NLDEV_CMD_SYS_GET, false, 2);
  Ask(fd, "get", RDMA_NLDEV_CMD_GET, true, 0);
  Ask(fd, "get_sendto_no_addr", RDMA_NLDEV_CMD_GET, true, 3);
  Ask(fd, "get_write", RDMA_NLDEV_CMD_GET, true, 2);
  // GET_CHARDEV "uverbs" of device index 0, as rdmanl_get_chardev() asks it.
  struct {
    nlattr a;
    uint32_t index;
    nlattr b;
    char name[8];
  } attrs{{8, RDMA_NLDEV_ATTR_DEV_INDEX}, 0, {4 + 7, RDMA_NLDEV_ATTR_CHARDEV_TYPE}, "uverbs"};
  Ask(fd, "get_chardev", RDMA_NLDEV_CMD_GET_CHARDEV, false, 1, &attrs, sizeof(attrs) - 1);

  // Multicast groups (device events, LS) and another netlink socket (bound: it has a port) as
  // the peer.
  const int other = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  Report("bind_other", Ret(bind(other, reinterpret_cast<sockaddr*>(&local), sizeof(local))));
  const int third = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  sockaddr_nl groups{};
  groups.nl_family = AF_NETLINK;
  groups.nl_groups = 1u << (RDMA_NL_GROUP_LS - 1);
  Report("bind_groups", Ret(bind(third, reinterpret_cast<sockaddr*>(&groups), sizeof(groups))));
  close(third);
  int group = RDMA_NL_GROUP_LS;
  Report("add_membership", Ret(setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group))));
  sockaddr_nl other_addr{};
  socklen_t other_len = sizeof(other_addr);
  getsockname(other, reinterpret_cast<sockaddr*>(&other_addr), &other_len);
  const std::vector<char> m = Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), 0);
  Report("sendto_peer", Ret(sendto(fd, m.data(), m.size(), 0,
                                   reinterpret_cast<sockaddr*>(&other_addr), sizeof(other_addr))));
  Report("connect_peer", Ret(connect(fd, reinterpret_cast<sockaddr*>(&other_addr), sizeof(other_addr))));
  iovec iov{const_cast<char*>(m.data()), m.size()};
  Report("writev", Ret(writev(fd, &iov, 1)));
  // A message that claims more bytes than were sent: the kernel drops it silently.
  std::vector<char> bad = m;
  const uint32_t lie = 4096;
  std::memcpy(bad.data(), &lie, sizeof(lie));
  Report("truncated", Ret(send(fd, bad.data(), bad.size(), 0)));
  // Ways to write into the socket that bypass write() and send*(): sendfile, splice, and
  // asynchronous I/O (last: natively their requests would be answered unread).
  const int mem = memfd_create("rxp-netlink-probe", MFD_CLOEXEC);
  Report("memfd", Ret(write(mem, m.data(), m.size()) == static_cast<ssize_t>(m.size()) ? 0 : -1));
  off_t off = 0;
  Report("sendfile", Ret(sendfile(fd, mem, &off, m.size())));
  int pipe_fds[2];
  Report("pipe", Ret(pipe2(pipe_fds, O_CLOEXEC)));
  Report("pipe_write", Ret(write(pipe_fds[1], m.data(), m.size())));
  Report("splice", Ret(splice(pipe_fds[0], nullptr, fd, nullptr, m.size(), 0)));
  aio_context_t ctx = 0;
  Report("io_setup", Ret(syscall(SYS_io_setup, 4, &ctx)));
  iocb cb{};
  cb.aio_lio_opcode = IOCB_CMD_PWRITE;
  cb.aio_fildes = static_cast<uint32_t>(fd);
  cb.aio_buf = reinterpret_cast<uint64_t>(m.data());
  cb.aio_nbytes = m.size();
  iocb* cbs[1] = {&cb};
  Report("aio_write", Ret(syscall(SYS_io_submit, ctx, 1, cbs)));
  close(other);
  close(fd);
  return 0;
}
