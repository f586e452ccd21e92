// deny_netlink_rdma [--check] PROGRAM [ARGS...]: runs PROGRAM with every
// socket(AF_NETLINK, *, NETLINK_RDMA) failing with EPROTONOSUPPORT, as on a kernel without
// RDMA netlink or in a sandbox that does not emulate it. libibverbs then cannot use
// find_sysfs_devs_nl() and takes its sysfs fallback (find_sysfs_devs(), honouring
// SYSFS_PATH), which is what the sysfs tests want to exercise.
//
// --check: before exec'ing, proves the filter works (the socket call must fail with
// EPROTONOSUPPORT and an AF_NETLINK/NETLINK_ROUTE socket must still open).
#include <errno.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

namespace {

struct SeccompRelease {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

int Usage() {
  std::fprintf(stderr, "usage: deny_netlink_rdma [--check] PROGRAM [ARGS...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 1;
  bool check = false;
  if (argc > 1 && std::strcmp(argv[1], "--check") == 0) {
    check = true;
    first = 2;
  }
  if (argc <= first) return Usage();

  // Everything is allowed but the one socket family/protocol pair. The socket type is not
  // compared, so SOCK_RAW | SOCK_CLOEXEC (libnl's) is caught as well.
  std::unique_ptr<void, SeccompRelease> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) {
    std::fprintf(stderr, "deny_netlink_rdma: seccomp_init failed\n");
    return 1;
  }
  int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
                            SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_EQ, NETLINK_RDMA));
  if (rc == 0) rc = seccomp_load(ctx.get());  // sets no_new_privs (SCMP_FLTATR_CTL_NNP)
  if (rc != 0) {
    std::fprintf(stderr, "deny_netlink_rdma: installing the filter failed: %s\n", std::strerror(-rc));
    return 1;
  }
  if (check) {
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (fd >= 0 || errno != EPROTONOSUPPORT) {
      std::fprintf(stderr, "deny_netlink_rdma: NETLINK_RDMA socket not refused (fd %d, %s)\n", fd,
                   std::strerror(errno));
      return 1;
    }
    int route = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (route < 0) {
      std::fprintf(stderr, "deny_netlink_rdma: NETLINK_ROUTE refused too: %s\n", std::strerror(errno));
      return 1;
    }
    ::close(route);
  }
  ::execvp(argv[first], argv + first);
  std::fprintf(stderr, "deny_netlink_rdma: exec %s: %s\n", argv[first], std::strerror(errno));
  return 127;
}
