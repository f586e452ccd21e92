// rxp_own_seccomp_filter DEVICE TAG: opens DEVICE, installs a seccomp filter of its own that
// returns SECCOMP_RET_TRACE | TAG for every ioctl (a program may stack filters: it runs with
// NO_NEW_PRIVS under the harness), then allocates a PD and prints the outcome.
//
// Natively no tracer is attached, so the ALLOC_PD ioctl fails with ENOSYS. Under `rdmaproxy
// run` the harness is the tracer: it must still treat the ioctl as the proxied call it is,
// whatever data the program's filter put on the stop, so the policy applies to it
// (tests/vm/cases/harness_own_filter.sh; docs/harness.md, "The program's own seccomp filters").
#include <infiniband/verbs.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DEVICE TAG\n", argv[0]);
    return 2;
  }
  const auto tag = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0)) & SECCOMP_RET_DATA;
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_context* context = nullptr;
  for (int i = 0; list != nullptr && list[i] != nullptr && context == nullptr; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), argv[1]) == 0) context = ibv_open_device(list[i]);
  if (context == nullptr) {
    std::fprintf(stderr, "cannot open %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }
  sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | tag),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(insns)), insns};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    std::fprintf(stderr, "seccomp: %s\n", std::strerror(errno));
    return 2;
  }
  ibv_pd* pd = ibv_alloc_pd(context);
  std::printf("alloc_pd %s\n", pd != nullptr ? "ok" : strerrorname_np(errno));
  return 0;  // exit_group is not filtered; the kernel releases the objects with the file
}
