// rxp_netlink_probe: what a program's NETLINK_RDMA socket can ask the kernel, in raw netlink
// (no libnl), one line per question, for the suite's `netlink` case to compare a native run
// with one under `rdmaproxy run` (tools/harness/netlink_rdma.h):
//   socket                 ok | errno E
//   sys_get_{sendmsg,sendto,write}  ok copy_on_fork=N | errno E   (RDMA_NLDEV_CMD_SYS_GET)
//   get                    ok devices=N NAME:INDEX,... | errno E   (RDMA_NLDEV_CMD_GET dump)
//   get_chardev            ok name=uverbsN | errno E   (RDMA_NLDEV_CMD_GET_CHARDEV "uverbs",
//                                                       device index 0)
//   get_chardev_each       ok NAME=uverbsN,... | errno E   (the same, of each listed device)
//   get_peek               ok devices=N NAME:INDEX,...   (the dump read with MSG_PEEK|MSG_TRUNC
//                                                         first, as libnl can)
//   get_recvmsg_trunc      ok whole>64=1 trunc=1 from=0 namelen=12   (its first datagram read
//                                                         with recvmsg into 64 bytes)
//   port_bad, port_bad_capped   errno EINVAL len=N flags=F   (PORT_GET of port 99 of the
//                                                         first listed device: the error's
//                                                         echo, whole or capped to the
//                                                         header with NETLINK_CAP_ACK)
//   get_poll               ok readable=1 first_datagram=M datagrams=D   (poll says readable
//                                                         before the first receive; the
//                                                         dump's shape, datagram by datagram)
//   recv_*, read_*, readv_*, recvmsg_*, recvfrom_*   errno E kept=K | ok n=N kept=K
//                          (a receive of a GET answer that the kernel refuses before its queue
//                          -- a kernel buffer, IOV_MAX + 1 iovecs, a negative length, MSG_OOB --
//                          or takes the datagram and then fails or truncates; kept: whether the
//                          answer is still queued after it)
//   blocked_recvmsg        ok type=T index_ok=1 flags=F from=P namelen=N cred=pidP,uidU
//                          blocked=1 left=EAGAIN   (a GET answered to a recvmsg that another
//                          thread had already blocked in, with SO_PASSCRED); the same as
//                          blocked_recvmmsg (one entry), "n=1 " first
//   recvmmsg_*             ok n=N TYPE/LEN,... next=WHAT   (answers taken with recvmmsg:
//                          AskMany)
//   bind_other, bind_groups, add_membership, sendto_peer, connect_peer, writev, truncated,
//   sendfile, splice, aio_write (and their set-up steps)   ok | errno E
// Natively as root everything succeeds (as another user, sending to or connecting to another
// socket is EPERM); under the harness SYS_GET and the device queries must give the same
// answers (about the allowed devices only, under their sandbox uverbs names), and the rest the
// harness's refusals. Exit status 0 unless the socket API itself misbehaves.
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <fstream>
#include <string>
#include <thread>
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
  std::vector<std::pair<std::string, uint32_t>> devices;  // DEV_NAME, DEV_INDEX
  std::string chardev;  // CHARDEV_NAME
  std::string Devices() const {
    std::string out;
    for (const auto& [name, index] : devices)
      out += (out.empty() ? "" : ",") + name + ":" + std::to_string(index);
    return out;
  }
};

std::string StringAttr(const char* p, size_t len) { return std::string(p, strnlen(p, len)); }

// Reads until NLMSG_DONE, an NLMSG_ERROR or (no dump) the first data message. With `peek`,
// each datagram is first peeked with MSG_TRUNC for its length, then read into a buffer of
// exactly that size.
Answer Receive(int fd, uint16_t type, bool dump, bool peek = false) {
  Answer a;
  std::vector<char> buf(65536);
  for (;;) {
    if (peek) {
      char small[16];
      const ssize_t whole = recv(fd, small, sizeof(small), MSG_PEEK | MSG_TRUNC);
      if (whole < 0) {
        a.err = errno;
        return a;
      }
      buf.assign(static_cast<size_t>(whole), 0);
    }
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
        const auto attr_type = static_cast<uint16_t>(attr.nla_type & NLA_TYPE_MASK);
        const char* payload = data + off + sizeof(nlattr);
        const size_t payload_len = attr.nla_len - sizeof(nlattr);
        if (attr_type == RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK && payload_len >= 1 &&
            type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET))
          a.copy_on_fork = static_cast<uint8_t>(payload[0]);
        if (type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)) {
          if (attr_type == RDMA_NLDEV_ATTR_DEV_INDEX && payload_len >= 4) {
            uint32_t index;
            std::memcpy(&index, payload, sizeof(index));
            if (a.devices.size() < static_cast<size_t>(a.messages)) a.devices.emplace_back("", 0);
            a.devices.back().second = index;
          }
          if (attr_type == RDMA_NLDEV_ATTR_DEV_NAME) {
            if (a.devices.size() < static_cast<size_t>(a.messages)) a.devices.emplace_back("", 0);
            a.devices.back().first = StringAttr(payload, payload_len);
          }
        }
        if (attr_type == RDMA_NLDEV_ATTR_CHARDEV_NAME &&
            type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET_CHARDEV))
          a.chardev = StringAttr(payload, payload_len);
        off += NLA_ALIGN(attr.nla_len);
      }
      if (!dump) return a;
    }
  }
}

Answer Ask(int fd, const char* what, uint16_t op, bool dump, int how,
           const void* payload = nullptr, size_t len = 0, bool report = true,
           bool peek = false) {
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
  if (sent < 0) {
    Answer failed;
    failed.err = errno;
    if (report) Report(what, failed.err);
    return failed;
  }
  const Answer a = Receive(fd, type, dump, peek);
  std::string detail;
  if (op == RDMA_NLDEV_CMD_SYS_GET) detail = "copy_on_fork=" + std::to_string(a.copy_on_fork);
  if (op == RDMA_NLDEV_CMD_GET && a.err == 0)
    detail = "devices=" + std::to_string(a.messages) + " " + a.Devices();
  if (op == RDMA_NLDEV_CMD_GET_CHARDEV && a.err == 0) detail = "name=" + a.chardev;
  if (report) Report(what, a.err, detail.c_str());
  return a;
}

// GET_CHARDEV "uverbs" of device `index`, as rdmanl_get_chardev() asks it.
Answer AskUverbs(int fd, const char* what, uint32_t index, bool report) {
  struct {
    nlattr a;
    uint32_t index;
    nlattr b;
    char name[8];
  } attrs{{8, RDMA_NLDEV_ATTR_DEV_INDEX}, index, {4 + 7, RDMA_NLDEV_ATTR_CHARDEV_TYPE}, "uverbs"};
  return Ask(fd, what, RDMA_NLDEV_CMD_GET_CHARDEV, false, 1, &attrs, sizeof(attrs) - 1, report);
}

int Ret(long r) { return r < 0 ? errno : 0; }

// PORT_GET of a port the device does not have (nldev_port_get_doit(): EINVAL), acknowledged:
// the error message's length and flags show how much of the request it echoes, which
// NETLINK_CAP_ACK caps to the header (netlink_ack()).
void AskBadPort(int fd, const char* what, uint32_t index, bool capped) {
  const int on = capped ? 1 : 0;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &on, sizeof(on)) != 0) return Report(what, errno);
  struct {
    nlattr a;
    uint32_t index;
    nlattr b;
    uint32_t port;
  } attrs{{8, RDMA_NLDEV_ATTR_DEV_INDEX}, index, {8, RDMA_NLDEV_ATTR_PORT_INDEX}, 99};
  const std::vector<char> m = Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET),
                                      NLM_F_ACK, &attrs, sizeof(attrs));
  if (send(fd, m.data(), m.size(), 0) < 0) return Report(what, errno);
  std::vector<char> buf(65536);
  const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
  if (n < 0) return Report(what, errno);
  nlmsghdr h{};
  nlmsgerr e{};
  std::memcpy(&h, buf.data(), std::min(sizeof(h), static_cast<size_t>(n)));
  if (static_cast<size_t>(n) >= sizeof(h) + sizeof(e)) std::memcpy(&e, buf.data() + sizeof(h), sizeof(e));
  std::printf("%s %s len=%u flags=%#x echoed_seq_ok=%d\n", what,
              h.nlmsg_type == NLMSG_ERROR && e.error < 0 ? strerrorname_np(-e.error) : "no-error",
              h.nlmsg_len, h.nlmsg_flags, e.msg.nlmsg_seq == h.nlmsg_seq ? 1 : 0);
  const int off = 0;
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &off, sizeof(off));
}

// A GET dump waited for with poll, then read datagram by datagram (read, then readv) until
// NLMSG_DONE: how many messages the first holds and how many datagrams there are.
void AskPolled(int fd) {
  const std::vector<char> m =
      Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_DUMP);
  if (send(fd, m.data(), m.size(), 0) < 0) return Report("get_poll", errno);
  pollfd p{fd, POLLIN, 0};
  const int readable = poll(&p, 1, 5000) == 1 && (p.revents & POLLIN) != 0 ? 1 : 0;
  std::vector<char> buf(65536);
  int first = -1, datagrams = 0;
  for (bool done = false; !done;) {
    // The first datagram with read(), the rest with readv() into two halves.
    iovec halves[2] = {{buf.data(), buf.size() / 2}, {buf.data() + buf.size() / 2, buf.size() / 2}};
    const ssize_t n = datagrams == 0 ? read(fd, buf.data(), buf.size()) : readv(fd, halves, 2);
    if (n < 0) return Report("get_poll", errno);
    ++datagrams;
    int messages = 0;
    for (size_t at = 0; at + sizeof(nlmsghdr) <= static_cast<size_t>(n);) {
      nlmsghdr h;
      std::memcpy(&h, buf.data() + at, sizeof(h));
      if (h.nlmsg_len < sizeof(nlmsghdr)) break;
      ++messages;
      done = done || h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR;
      at += NLMSG_ALIGN(h.nlmsg_len);
    }
    if (first < 0) first = messages;
    if (messages == 0) break;
  }
  char detail[96];
  std::snprintf(detail, sizeof(detail), "readable=%d first_datagram=%d datagrams=%d", readable,
                first, datagrams);
  Report("get_poll", 0, detail);
}

// A GET dump whose first datagram is read with recvmsg into 64 bytes: MSG_TRUNC returns its
// whole length and sets MSG_TRUNC in msg_flags; the source is the kernel. The rest of the dump
// is drained.
void AskTruncated(int fd) {
  const std::vector<char> m =
      Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_DUMP);
  if (send(fd, m.data(), m.size(), 0) < 0) return Report("get_recvmsg_trunc", errno);
  char small[64];
  iovec iov{small, sizeof(small)};
  sockaddr_nl from{};
  from.nl_pid = 12345;
  msghdr msg{};
  msg.msg_name = &from;
  msg.msg_namelen = sizeof(from);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  const ssize_t n = recvmsg(fd, &msg, MSG_TRUNC);
  if (n < 0) return Report("get_recvmsg_trunc", errno);
  char detail[96];
  std::snprintf(detail, sizeof(detail), "whole>64=%d trunc=%d from=%u namelen=%u", n > 64 ? 1 : 0,
                (msg.msg_flags & MSG_TRUNC) != 0 ? 1 : 0, from.nl_pid, msg.msg_namelen);
  std::vector<char> rest(65536);
  while (recv(fd, rest.data(), rest.size(), MSG_DONTWAIT) > 0) {
  }
  Report("get_recvmsg_trunc", 0, detail);
}

// Receives the kernel checks before it takes a datagram, and ones that take it and fail
// after: each after a GET of device `index` (one datagram), then a plain MSG_DONTWAIT receive
// says whether the answer is still queued. "NAME errno E kept=K" or "NAME ok n=N kept=K".
void AskBadReceives(int fd, uint32_t index) {
  struct {
    nlattr a;
    uint32_t index;
  } attrs{{8, RDMA_NLDEV_ATTR_DEV_INDEX}, index};
  const uint16_t get = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
  void* const unmapped =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(unmapped, 4096);
  auto* const kernel = reinterpret_cast<void*>(uintptr_t{0xffff888000000000});
  // A page the program can read, not write; each case that uses it fills it first.
  void* const readonly =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  static char buf[8192];
  static iovec many[IOV_MAX + 1];
  for (iovec& v : many) v = {buf, 8};
  sockaddr_nl from{};
  socklen_t from_len = sizeof(from);
  socklen_t negative_len = static_cast<socklen_t>(-1);
  iovec one{buf, sizeof(buf)};

  struct Case {
    const char* name;
    std::function<ssize_t()> receive;
  };
  const auto with = [&](iovec* iov, size_t count, void* name, socklen_t namelen) {
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = count;
    m.msg_name = name;
    m.msg_namelen = namelen;
    return m;
  };
  msghdr m{};
  const Case cases[] = {
      {"recv_kernel_buffer", [&] { return recv(fd, kernel, 4096, 0); }},
      {"read_huge_count", [&] {  // the raw call: the compiler refuses read() of SIZE_MAX
         return static_cast<ssize_t>(syscall(SYS_read, fd, buf, SIZE_MAX));
       }},
      {"read_zero", [&] { return read(fd, buf, 0); }},
      {"readv_zero", [&] {
         iovec none{buf, 0};
         return readv(fd, &none, 1);
       }},
      {"readv_iov_max", [&] { return readv(fd, many, IOV_MAX + 1); }},
      {"recv_oob", [&] { return recv(fd, buf, sizeof(buf), MSG_OOB); }},
      {"recvmsg_bad_msghdr", [&] { return recvmsg(fd, static_cast<msghdr*>(kernel), 0); }},
      {"recvmsg_bad_iov", [&] {
         m = with(static_cast<iovec*>(unmapped), 1, nullptr, 0);
         return recvmsg(fd, &m, 0);
       }},
      {"recvmsg_iov_max", [&] {
         m = with(many, IOV_MAX + 1, nullptr, 0);
         return recvmsg(fd, &m, 0);
       }},
      {"recvmsg_negative_iov_len", [&] {
         iovec bad{buf, SIZE_MAX};
         m = with(&bad, 1, nullptr, 0);
         return recvmsg(fd, &m, 0);
       }},
      {"recvmsg_negative_namelen", [&] {
         m = with(&one, 1, &from, negative_len);
         return recvmsg(fd, &m, 0);
       }},
      {"recvmsg_compat", [&] {
         m = with(&one, 1, nullptr, 0);
         return recvmsg(fd, &m, static_cast<int>(0x80000000u));  // MSG_CMSG_COMPAT
       }},
      {"recv_zero", [&] { return recv(fd, buf, 0, 0); }},
      {"recv_zero_trunc", [&] { return recv(fd, buf, 0, MSG_TRUNC); }},
      {"recv_unmapped", [&] { return recv(fd, unmapped, 4096, 0); }},
      {"recv_errqueue", [&] { return recv(fd, buf, sizeof(buf), MSG_ERRQUEUE); }},
      {"recv_readonly_buffer", [&] {
         mprotect(readonly, 4096, PROT_READ);
         return recv(fd, readonly, 4096, 0);
       }},
      {"recvmsg_readonly_msghdr", [&] {
         // The header is read, the datagram taken, then msg_flags cannot be written.
         m = with(&one, 1, nullptr, 0);
         mprotect(readonly, 4096, PROT_READ | PROT_WRITE);
         std::memcpy(readonly, &m, sizeof(m));
         mprotect(readonly, 4096, PROT_READ);
         return recvmsg(fd, static_cast<msghdr*>(readonly), 0);
       }},
      {"recvfrom_no_addrlen", [&] {
         return recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), nullptr);
       }},
      {"recvfrom_negative_addrlen", [&] {
         negative_len = static_cast<socklen_t>(-1);
         return recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &negative_len);
       }},
      {"recvfrom_short_addrlen", [&] {
         from = {};
         from.nl_pid = 777;
         from_len = 4;
         const ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
         // The family's 2 bytes written, the port left; the length set to the address's.
         std::printf("recvfrom_short_addrlen_address family=%u pid=%u len=%u\n", from.nl_family,
                     from.nl_pid, from_len);
         return n;
       }},
      {"recvmsg_cloexec", [&] {
         m = with(&one, 1, nullptr, 0);
         m.msg_controllen = 0;
         const ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
         std::printf("recvmsg_cloexec_flags %#x\n", static_cast<unsigned>(m.msg_flags));
         return n;
       }},
  };
  for (const Case& c : cases) {
    const std::vector<char> request = Message(get, 0, &attrs, sizeof(attrs));
    if (send(fd, request.data(), request.size(), 0) < 0) {
      Report(c.name, errno);
      continue;
    }
    errno = 0;
    const ssize_t n = c.receive();
    const int err = n < 0 ? errno : 0;
    static char rest[65536];
    const ssize_t left = recv(fd, rest, sizeof(rest), MSG_DONTWAIT);
    nlmsghdr h{};
    if (left >= static_cast<ssize_t>(sizeof(h))) std::memcpy(&h, rest, sizeof(h));
    const char* kept = left < 0 && errno == EAGAIN ? "0" : h.nlmsg_type == get ? "1" : "other";
    if (err != 0)
      std::printf("%s errno %s kept=%s\n", c.name, strerrorname_np(err), kept);
    else
      std::printf("%s ok n=%zd kept=%s\n", c.name, n, kept);
  }
}

// A GET request of device `index` (RDMA_NLDEV_ATTR_DEV_INDEX).
std::vector<char> GetOfDevice(uint32_t index) {
  struct {
    nlattr a;
    uint32_t index;
  } attrs{{8, RDMA_NLDEV_ATTR_DEV_INDEX}, index};
  return Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), 0, &attrs, sizeof(attrs));
}

// The control messages of a receive, by offset (the CMSG_* macros cast C-style):
// "cred=pidP,uidU" for SCM_CREDENTIALS ("cred=none" without), then " pktinfo=groupG" for
// NETLINK_PKTINFO when there is one.
std::string ControlSummary(const char* control, size_t len) {
  std::string cred = "none", pktinfo;
  for (size_t at = 0; at + sizeof(cmsghdr) <= len;) {
    cmsghdr c;
    std::memcpy(&c, control + at, sizeof(c));
    if (c.cmsg_len < sizeof(cmsghdr) || c.cmsg_len > len - at) break;
    if (c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_CREDENTIALS &&
        c.cmsg_len >= sizeof(cmsghdr) + sizeof(ucred)) {
      ucred u;
      std::memcpy(&u, control + at + sizeof(cmsghdr), sizeof(u));
      cred = "pid" + std::to_string(u.pid) + ",uid" + std::to_string(u.uid);
    }
    if (c.cmsg_level == SOL_NETLINK && c.cmsg_type == NETLINK_PKTINFO &&
        c.cmsg_len >= sizeof(cmsghdr) + sizeof(nl_pktinfo)) {
      nl_pktinfo info;
      std::memcpy(&info, control + at + sizeof(cmsghdr), sizeof(info));
      pktinfo = " pktinfo=group" + std::to_string(info.group);
    }
    at += (c.cmsg_len + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);
  }
  return "cred=" + cred + pktinfo;
}

// A GET of device `index` answered to a recvmsg with room for control messages, while
// SO_PASSCRED and NETLINK_PKTINFO are on: peeked, then taken (both with the kernel's control
// messages), then once more into a control buffer too short for the credentials (MSG_CTRUNC).
// "control_peek ok type=T index_ok=1 flags=F len=L cred=pid0,uid0 pktinfo=group0".
void AskWithControl(int fd, uint32_t index) {
  const int on = 1, off = 0;
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0 ||
      setsockopt(fd, SOL_NETLINK, NETLINK_PKTINFO, &on, sizeof(on)) != 0)
    return Report("control_recvmsg", errno);
  const std::vector<char> m = GetOfDevice(index);
  auto receive = [&](const char* what, int flags, size_t control_len) {
    std::vector<char> buf(65536);
    iovec iov{buf.data(), buf.size()};
    alignas(8) char control[64] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = control_len;
    const ssize_t n = recvmsg(fd, &msg, flags | MSG_DONTWAIT);
    if (n < 0) return Report(what, errno);
    nlmsghdr h{};
    std::memcpy(&h, buf.data(), std::min(sizeof(h), static_cast<size_t>(n)));
    std::printf("%s ok type=%#x len=%zd flags=%#x controllen=%zu %s\n", what, h.nlmsg_type, n,
                static_cast<unsigned>(msg.msg_flags), static_cast<size_t>(msg.msg_controllen),
                ControlSummary(control, msg.msg_controllen).c_str());
  };
  if (send(fd, m.data(), m.size(), 0) < 0) return Report("control_recvmsg", errno);
  receive("control_peek", MSG_PEEK, 64);
  receive("control_recvmsg", 0, 64);
  if (send(fd, m.data(), m.size(), 0) < 0) return Report("control_short", errno);
  receive("control_short", 0, CMSG_SPACE(sizeof(nl_pktinfo)));
  char rest[64];
  Report("control_left", recv(fd, rest, sizeof(rest), MSG_DONTWAIT) < 0 ? errno : 0);
  setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off));
  setsockopt(fd, SOL_NETLINK, NETLINK_PKTINFO, &off, sizeof(off));
}

// A recvmsg already blocked on the empty socket (another thread) when a GET of device `index`
// is sent and answered: what it receives -- the answer's type and device index, msg_flags,
// the source, the SO_PASSCRED credentials the kernel attaches -- and whether anything is left
// queued after it. "blocked_recvmsg ok type=T index_ok=1 flags=F from=P namelen=N cred=...".
void AskBlocked(int fd, uint32_t index, bool many) {
  const char* const what = many ? "blocked_recvmmsg" : "blocked_recvmsg";
  const long nr = many ? SYS_recvmmsg : SYS_recvmsg;
  const int on = 1, off = 0;
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0)
    return Report(what, errno);
  std::atomic<pid_t> tid{0};
  std::string got;
  std::thread receiver([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    std::vector<char> buf(65536);
    iovec iov{buf.data(), buf.size()};
    alignas(8) char control[64] = {};
    sockaddr_nl from{};
    from.nl_pid = 12345;
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof(from);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    mmsghdr entry{msg, 0};
    ssize_t n = many ? recvmmsg(fd, &entry, 1, 0, nullptr) : recvmsg(fd, &msg, 0);
    if (n < 0) {
      got = std::string("errno ") + strerrorname_np(errno);
      return;
    }
    if (many) {
      got = "n=" + std::to_string(n) + " ";
      n = entry.msg_len;
      msg = entry.msg_hdr;
    }
    nlmsghdr h{};
    std::memcpy(&h, buf.data(), std::min(sizeof(h), static_cast<size_t>(n)));
    uint32_t seen = UINT32_MAX;
    for (size_t off_a = NLMSG_HDRLEN; off_a + sizeof(nlattr) <= static_cast<size_t>(n);) {
      nlattr a;
      std::memcpy(&a, buf.data() + off_a, sizeof(a));
      if (a.nla_len < sizeof(nlattr)) break;
      if ((a.nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_ATTR_DEV_INDEX && a.nla_len >= 8)
        std::memcpy(&seen, buf.data() + off_a + sizeof(nlattr), sizeof(seen));
      off_a += NLA_ALIGN(a.nla_len);
    }
    const std::string cred = ControlSummary(control, msg.msg_controllen);
    char line[160];
    std::snprintf(line, sizeof(line), "ok type=%#x index_ok=%d flags=%#x from=%u namelen=%u "
                  "%s", h.nlmsg_type, seen == index ? 1 : 0,
                  static_cast<unsigned>(msg.msg_flags), from.nl_pid, msg.msg_namelen,
                  cred.c_str());
    got += line;
  });
  // Until the receiver sleeps in recvmsg: /proc/self/task/TID/syscall starts with its number.
  bool blocked = false;
  for (int i = 0; i < 500 && !blocked; ++i) {
    if (tid != 0) {
      std::ifstream f("/proc/self/task/" + std::to_string(tid.load()) + "/syscall");
      long in = -1;
      blocked = (f >> in) && in == nr;
    }
    if (!blocked) usleep(10000);
  }
  const std::vector<char> m = GetOfDevice(index);
  const int sent = send(fd, m.data(), m.size(), 0) < 0 ? errno : 0;
  receiver.join();
  char rest[64];
  const char* left = recv(fd, rest, sizeof(rest), MSG_DONTWAIT) < 0 ? strerrorname_np(errno)
                                                                     : "a datagram";
  setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off));
  if (sent != 0) return Report(what, sent);
  std::printf("%s %s blocked=%d left=%s\n", what, got.c_str(), blocked ? 1 : 0, left);
}

// Entries for recvmmsg, each with a 64 KiB buffer (and a control buffer when asked).
struct Entries {
  explicit Entries(size_t count, bool control = false)
      : data(count, std::vector<char>(65536)), controls(count), iov(count), v(count) {
    for (size_t i = 0; i < count; ++i) {
      iov[i] = {data[i].data(), data[i].size()};
      v[i].msg_hdr.msg_iov = &iov[i];
      v[i].msg_hdr.msg_iovlen = 1;
      if (control) {
        v[i].msg_hdr.msg_control = controls[i].data();
        v[i].msg_hdr.msg_controllen = controls[i].size();
      }
    }
  }
  // "n=N TYPE/LEN,..." for the first n entries (with their control messages when asked).
  std::string Summary(int n, bool control = false) const {
    std::string out = "n=" + std::to_string(n);
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      nlmsghdr h{};
      std::memcpy(&h, data[i].data(), std::min<size_t>(sizeof(h), v[i].msg_len));
      char one[64];
      std::snprintf(one, sizeof(one), "%s%#x/%u", i == 0 ? " " : ",", h.nlmsg_type, v[i].msg_len);
      out += one;
      if (control)
        out += "/" + ControlSummary(controls[i].data(), v[i].msg_hdr.msg_controllen);
    }
    return out;
  }
  std::vector<std::vector<char>> data;
  std::vector<std::array<char, 64>> controls;
  std::vector<iovec> iov;
  std::vector<mmsghdr> v;
};

// What a plain MSG_DONTWAIT receive finds next: "EAGAIN", another errno, or the type of the
// datagram it took.
std::string Next(int fd) {
  std::vector<char> buf(65536);
  const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
  if (n < 0) return strerrorname_np(errno);
  nlmsghdr h{};
  std::memcpy(&h, buf.data(), std::min(sizeof(h), static_cast<size_t>(n)));
  char type[16];
  std::snprintf(type, sizeof(type), "%#x", h.nlmsg_type);
  return type;
}

// recvmmsg of answers: a GET dump taken whole with MSG_WAITFORONE; the kernel's own answer
// (SYS_GET) before and after a device's GET; peeked three times; a zero timeout (one datagram);
// an entry whose buffers fault after one datagram (the error comes with the next receive); a
// blocking call that runs out of datagrams (SO_RCVTIMEO); entries with control messages.
// "recvmmsg_NAME ok n=N TYPE/LEN,... next=WHAT".
void AskMany(int fd, uint32_t index) {
  const std::vector<char> get = GetOfDevice(index);
  const uint16_t sys_get_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET);
  auto send_all = [&](std::initializer_list<const std::vector<char>*> requests) {
    for (const auto* m : requests)
      if (send(fd, m->data(), m->size(), 0) < 0) return errno;
    return 0;
  };
  auto report = [&](const char* what, int n, const Entries& e, const std::string& extra = "",
                    bool control = false) {
    if (n < 0) return Report(what, errno);
    const std::string detail = e.Summary(n, control) + extra + " next=" + Next(fd);
    Report(what, 0, detail.c_str());
  };
  {
    const std::vector<char> dump =
        Message(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_DUMP);
    if (int err = send_all({&dump})) return Report("recvmmsg_dump", err);
    Entries e(16);
    report("recvmmsg_dump", recvmmsg(fd, e.v.data(), 16, MSG_WAITFORONE, nullptr), e);
  }
  for (const bool kernel_first : {true, false}) {
    const char* what = kernel_first ? "recvmmsg_kernel_first" : "recvmmsg_answer_first";
    const std::vector<char> sys_get = Message(sys_get_type, 0);
    if (int err = kernel_first ? send_all({&sys_get, &get}) : send_all({&get, &sys_get}))
      return Report(what, err);
    Entries e(4);
    report(what, recvmmsg(fd, e.v.data(), 4, MSG_WAITFORONE, nullptr), e);
  }
  {
    if (int err = send_all({&get})) return Report("recvmmsg_peek", err);
    Entries e(3);
    const int n = recvmmsg(fd, e.v.data(), 3, MSG_PEEK | MSG_DONTWAIT, nullptr);
    report("recvmmsg_peek", n, e, " then=" + Next(fd));
  }
  {
    if (int err = send_all({&get, &get})) return Report("recvmmsg_timeout_zero", err);
    Entries e(4);
    timespec zero{0, 0};
    const int n = recvmmsg(fd, e.v.data(), 4, 0, &zero);
    report("recvmmsg_timeout_zero", n, e,
           " timeout=" + std::to_string(zero.tv_sec) + "." + std::to_string(zero.tv_nsec) +
               " then=" + Next(fd));
  }
  {
    if (int err = send_all({&get, &get})) return Report("recvmmsg_bad_entry", err);
    Entries e(2);
    e.v[1].msg_hdr.msg_iov = nullptr;  // the kernel faults reading it
    const int n = recvmmsg(fd, e.v.data(), 2, MSG_WAITFORONE, nullptr);
    const std::string after = " after=" + Next(fd);
    report("recvmmsg_bad_entry", n, e, after);
  }
  {
    // A blocking call without MSG_WAITFORONE waits for its second datagram: SO_RCVTIMEO ends
    // the wait, and the call returns the one it has (EAGAIN is not kept for the next receive).
    const timeval short_wait{0, 300000}, limit{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof(short_wait));
    Entries e(2);
    const int err = send_all({&get});
    const int n = err != 0 ? -1 : recvmmsg(fd, e.v.data(), 2, 0, nullptr);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    if (err != 0) return Report("recvmmsg_blocking", err);
    report("recvmmsg_blocking", n, e);
  }
  {
    const int on = 1, off = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0)
      return Report("recvmmsg_control", errno);
    const std::vector<char> sys_get = Message(sys_get_type, 0);
    const int err = send_all({&get, &sys_get});
    Entries e(3, /*control=*/true);
    const int n = err != 0 ? -1 : recvmmsg(fd, e.v.data(), 3, MSG_WAITFORONE, nullptr);
    if (err != 0) errno = err;
    report("recvmmsg_control", n, e, "", /*control=*/true);
    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off));
  }
}

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
  const Answer listed = Ask(fd, "get", RDMA_NLDEV_CMD_GET, true, 0);
  Ask(fd, "get_sendto_no_addr", RDMA_NLDEV_CMD_GET, true, 3);
  Ask(fd, "get_write", RDMA_NLDEV_CMD_GET, true, 2);
  Ask(fd, "get_peek", RDMA_NLDEV_CMD_GET, true, 0, nullptr, 0, true, /*peek=*/true);
  AskTruncated(fd);
  AskPolled(fd);
  AskUverbs(fd, "get_chardev", 0, true);
  if (listed.err != 0) {
    Report("get_chardev_each", listed.err);
  } else {
    std::string each;
    int err = 0;
    for (const auto& [name, index] : listed.devices) {
      const Answer a = AskUverbs(fd, "get_chardev_each", index, false);
      if (a.err != 0) err = a.err;
      each += (each.empty() ? "" : ",") + name + "=" + a.chardev;
    }
    Report("get_chardev_each", err, each.c_str());
    if (!listed.devices.empty()) {
      AskBadPort(fd, "port_bad", listed.devices.front().second, false);
      AskBadPort(fd, "port_bad_capped", listed.devices.front().second, true);
      AskBadReceives(fd, listed.devices.front().second);
      AskBlocked(fd, listed.devices.front().second, false);
      AskBlocked(fd, listed.devices.front().second, true);
      AskWithControl(fd, listed.devices.front().second);
      AskMany(fd, listed.devices.front().second);
    }
  }

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
