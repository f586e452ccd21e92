// rxp_hostile [--setup-only] DEVICE: sends malformed and forbidden commands to an RDMA device
// and prints the errno of each. Every case must get the same errno natively and under
// `rdmaproxy run`, and under the proxy none of them may reach the kernel; the program, and the
// harness, must survive all of them.
//
// --setup-only makes every legitimate call of a full run (opening the device, the PDs, CQs and
// the child's context the cases need) and none of the hostile ones: the proxy's "forwarded"
// counter must then be the same as for a full run, which shows that no hostile command was
// forwarded (tests/conformance/suite.sh, case hostile).
//
// Cases: truncated ioctl header (into an unmapped page), a length that lies about the
// attribute count, an overflowing count, unknown object / method / mandatory attribute, a
// duplicated attribute, an input pointer to unmapped memory, a denied method (another
// driver's), a non-RDMA fd as a completion channel, a channel fd or a handle with bits the
// kernel's lookups refuse, another process's handle, an MR over
// unmapped memory, malformed legacy writes (lying in_words, unknown command, overflowing WR
// counts), an mmap offset the kernel never handed out, and a malformed rdma_cm write.
//
// rxp_hostile --scratch-mr DEVICE (under `rdmaproxy run` only: natively there is no region)
// registers MRs over the harness's scratch region, whose writable half holds the validated copy
// of an ioctl while the kernel runs it: each must fail (EFAULT) before it reaches the kernel, so
// that no device can write there through a proxied fd (a device fd that reached the program
// around the path check is not: docs/threat-model.md). An MR over the program's own memory
// next to it must work.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "raw_ioctl.h"
#include "tools/harness/testdata/scratch_region.h"

namespace {

using namespace rxp_conformance;

int g_cases = 0;
bool g_hostile = true;  // false: --setup-only

void Report(const char* name, int err) {
  ++g_cases;
  std::printf("%s %s\n", name, err == 0 ? "ok" : strerrorname_np(err));
  std::fflush(stdout);
}

// Runs a hostile case (not with --setup-only) and reports its errno.
#define HOSTILE(name, expr)         \
  do {                              \
    if (g_hostile) Report(name, (expr)); \
  } while (0)

// A page followed by an inaccessible guard page (PROT_NONE keeps the address taken, so no
// later mapping -- an rxe queue, say -- can land there): bytes at its end run into nothing.
unsigned char* EdgeOfMapping() {
  auto* p = static_cast<unsigned char*>(
      mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  mprotect(p + 4096, 4096, PROT_NONE);
  return p + 4096;
}

int WriteRaw(int fd, const void* buf, size_t len) {
  return write(fd, buf, len) == static_cast<ssize_t>(len) ? 0 : errno;
}

}  // namespace

// --scratch-mr: MRs over the harness's scratch region (in each half, and over the whole) and,
// as a control, over a page of the program's own.
int ScratchMr(ibv_context* ctx) {
  using rxp_testdata::kScratchHalf;
  ibv_pd* pd = ibv_alloc_pd(ctx);  // an ioctl: the harness has mapped its region by now
  const uint64_t region = rxp_testdata::FindScratchRegion();
  std::printf("found %d\n", region != 0 ? 1 : 0);
  if (pd == nullptr || region == 0) return 1;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  auto reg = [&](const char* name, uint64_t at, size_t length) {
    ibv_mr* mr = ibv_reg_mr(pd, reinterpret_cast<void*>(at), length, access);
    Report(name, mr != nullptr ? 0 : errno);
    if (mr != nullptr) ibv_dereg_mr(mr);
  };
  reg("scratch_mr_read_only_half", region, 4096);
  reg("scratch_mr_writable_half", region + kScratchHalf, 4096);
  reg("scratch_mr_whole", region, 2 * kScratchHalf);
  std::vector<unsigned char> own(3 * 4096);
  const uint64_t page = (reinterpret_cast<uint64_t>(own.data()) + 4095) & ~uint64_t{4095};
  reg("own_mr", page, 4096);
  ibv_dealloc_pd(pd);
  return 0;
}

int main(int argc, char** argv) {
  const bool scratch_mr = argc == 3 && std::strcmp(argv[1], "--scratch-mr") == 0;
  if (scratch_mr) {
    argv[1] = argv[2];
  } else if (argc == 3 && std::strcmp(argv[1], "--setup-only") == 0) {
    g_hostile = false;
    argv[1] = argv[2];
  } else if (argc != 2) {
    std::fprintf(stderr, "usage: rxp_hostile [--setup-only | --scratch-mr] DEVICE\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int num = 0;
  ibv_device** list = ibv_get_device_list(&num);
  ibv_device* dev = nullptr;
  for (int i = 0; list != nullptr && i < num; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), argv[1]) == 0) dev = list[i];
  if (dev == nullptr) {
    std::fprintf(stderr, "no device %s\n", argv[1]);
    return 1;
  }
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) {
    std::perror("ibv_open_device");
    return 1;
  }
  if (scratch_mr) return ScratchMr(ctx);
  const int fd = ctx->cmd_fd;
  const uint32_t drv = DriverIdOf(fd);
  unsigned char* edge = EdgeOfMapping();

  // Truncated header: 16 of its 24 bytes before an unmapped page.
  {
    auto r = Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, drv, {});
    std::memcpy(edge - 16, r.data(), 16);
    HOSTILE("truncated_header", Ioctl(fd, edge - 16));
  }
  // A length that lies: claims 2 attributes, holds 1.
  {
    ib_uverbs_query_port_resp_ex resp{};
    auto r = Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, drv,
                     {Attr(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1),
                      Attr(UVERBS_ATTR_QUERY_PORT_RESP, sizeof(resp), reinterpret_cast<uint64_t>(&resp))});
    r[6] = 3;  // num_attrs = 3 with the length of 2
    HOSTILE("lying_length", Ioctl(fd, r.data()));
  }
  // An overflowing count: 255 attributes (longer than a page).
  {
    std::vector<unsigned char> big(24 + 16 * 255);
    ib_uverbs_ioctl_hdr hdr{};
    hdr.length = static_cast<uint16_t>(big.size());
    hdr.num_attrs = 255;
    hdr.driver_id = drv;
    std::memcpy(big.data(), &hdr, sizeof(hdr));
    HOSTILE("overflowing_count", Ioctl(fd, big.data()));
  }
  // Unknown object, method, mandatory attribute.
  {
    auto r = Request(0x0777, 0, drv, {});
    HOSTILE("unknown_object", Ioctl(fd, r.data()));
    r = Request(UVERBS_OBJECT_PD, 0x0777, drv, {});
    HOSTILE("unknown_method", Ioctl(fd, r.data()));
    // The kernel judges attributes in order: the unknown one goes first.
    r = Request(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, drv,
                {Attr(0x0777, 4, 0), Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, 0)});
    HOSTILE("unknown_mandatory_attr", Ioctl(fd, r.data()));
  }
  // A duplicated attribute (naming a PD that exists, so that only the duplicate is wrong).
  {
    ibv_pd* pd = ibv_alloc_pd(ctx);
    auto r = Request(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, drv,
                     {Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, pd->handle),
                      Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, pd->handle)});
    HOSTILE("duplicate_attr", Ioctl(fd, r.data()));
    Report("pd_survived_duplicate", ibv_dealloc_pd(pd) == 0 ? 0 : errno);
  }
  // An input pointer to unmapped memory (QP.CREATE's CAP struct).
  {
    ibv_pd* pd = ibv_alloc_pd(ctx);
    ibv_cq* cq = ibv_create_cq(ctx, 8, nullptr, nullptr, 0);
    ib_uverbs_qp_cap resp_cap{};
    uint32_t qpn = 0;
    auto r = Request(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, drv,
                     {Attr(UVERBS_ATTR_CREATE_QP_HANDLE, 0, 0),
                      Attr(UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, pd->handle),
                      Attr(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, cq->handle),
                      Attr(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, cq->handle),
                      Attr(UVERBS_ATTR_CREATE_QP_USER_HANDLE, 8, 0),
                      Attr(UVERBS_ATTR_CREATE_QP_CAP, sizeof(ib_uverbs_qp_cap),
                           reinterpret_cast<uint64_t>(edge)),
                      Attr(UVERBS_ATTR_CREATE_QP_TYPE, 8, IB_UVERBS_QPT_RC),
                      Attr(UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(resp_cap),
                           reinterpret_cast<uint64_t>(&resp_cap)),
                      Attr(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4, reinterpret_cast<uint64_t>(&qpn))});
    HOSTILE("unmapped_input_pointer", Ioctl(fd, r.data()));
    // An MR over memory that is not mapped at all.
    if (g_hostile) {
      ibv_mr* mr = ibv_reg_mr(pd, edge, 4096, IBV_ACCESS_LOCAL_WRITE);
      Report("mr_over_unmapped", mr != nullptr ? 0 : errno);
      if (mr) ibv_dereg_mr(mr);
      // Ranges ib_umem_get() refuses (EINVAL) whatever memory they name: one whose end wraps
      // around the address space, one of more than UINT_MAX pages.
      unsigned char* page = edge - 4096;
      const auto at = reinterpret_cast<uint64_t>(page);
      mr = ibv_reg_mr(pd, page, static_cast<size_t>(UINT64_MAX - at + 2), IBV_ACCESS_LOCAL_WRITE);
      Report("mr_wrapping_length", mr != nullptr ? 0 : errno);
      if (mr) ibv_dereg_mr(mr);
      mr = ibv_reg_mr(pd, page, size_t{1} << 44, IBV_ACCESS_LOCAL_WRITE);
      Report("mr_too_many_pages", mr != nullptr ? 0 : errno);
      if (mr) ibv_dereg_mr(mr);
    }
    // CQ.CREATE naming `channel` (the attribute's whole 64-bit value) as its completion channel.
    uint32_t cqe = 0;
    const auto cq_with_channel = [&](uint64_t channel) {
      return Request(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, drv,
                     {Attr(UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0), Attr(UVERBS_ATTR_CREATE_CQ_CQE, 4, 8),
                      Attr(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, 0),
                      Attr(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, 0),
                      Attr(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, reinterpret_cast<uint64_t>(&cqe)),
                      Attr(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 0, channel)});
    };
    // A non-RDMA fd (a pipe) as a completion channel.
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) == 0) {
      r = cq_with_channel(static_cast<uint64_t>(pipefd[0]));
      HOSTILE("pipe_as_comp_channel", Ioctl(fd, r.data()));
    }
    // A real completion channel named with bits above the int the kernel's fd lookup takes
    // (lookup_get_fd_uobject(): EINVAL), and a PD handle that is negative as the kernel's s64
    // (lookup_get_idr_uobject(): EINVAL): the proxy must not take their low 32 bits.
    if (ibv_comp_channel* channel = ibv_create_comp_channel(ctx)) {
      r = cq_with_channel((1ull << 32) | static_cast<uint32_t>(channel->fd));
      HOSTILE("comp_channel_high_bits", Ioctl(fd, r.data()));
      ibv_destroy_comp_channel(channel);
    }
    r = Request(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, drv,
                {Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, (1ull << 63) | pd->handle)});
    HOSTILE("negative_handle", Ioctl(fd, r.data()));
    // Another process's handle: a child opens its own context and makes PDs until one has a
    // handle that does not exist in ours, and tells us the number.
    // Two pipes: one would let the child read back the handle it just wrote for the parent.
    int to_parent[2], to_child[2];
    if (pipe(to_parent) == 0 && pipe(to_child) == 0) {
      const pid_t child = fork();
      if (child == 0) {
        ibv_context* c2 = ibv_open_device(dev);
        uint32_t h = 0;
        for (int i = 0; i < 8 && c2 != nullptr; ++i)
          if (ibv_pd* p = ibv_alloc_pd(c2)) h = p->handle;
        if (write(to_parent[1], &h, sizeof(h)) != sizeof(h)) _exit(1);
        char wait_byte;
        if (read(to_child[0], &wait_byte, 1) < 0) _exit(1);  // stay alive until the parent tried
        _exit(0);
      }
      uint32_t foreign = 0;
      if (read(to_parent[0], &foreign, sizeof(foreign)) == sizeof(foreign)) {
        r = Request(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, drv,
                    {Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 0, foreign)});
        HOSTILE("another_process_handle", Ioctl(fd, r.data()));
      }
      (void)!write(to_child[1], "x", 1);
      waitpid(child, nullptr, 0);
      for (int f : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(f);
    }
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
  }
  // A method of another driver: mlx5 DEVX on this device (denied, and unknown off mlx5).
  {
    uint32_t eqn = 0;
    auto r = Request(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_EQN, drv,
                     {Attr(MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC, 4, 0),
                      Attr(MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN, 4, reinterpret_cast<uint64_t>(&eqn))});
    HOSTILE("denied_method_devx", Ioctl(fd, r.data()));
  }
  // Legacy writes: lying in_words, unknown command, overflowing WR counts.
  {
    struct {
      ib_uverbs_cmd_hdr hdr;
      unsigned char body[24];
    } msg{};
    msg.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
    msg.hdr.in_words = 9;  // the write is 8 words
    msg.hdr.out_words = 1;
    HOSTILE("write_lying_in_words", WriteRaw(fd, &msg, sizeof(msg)));
    msg.hdr.command = 62;
    msg.hdr.in_words = 8;
    HOSTILE("write_unknown_command", WriteRaw(fd, &msg, sizeof(msg)));
    ib_uverbs_post_send ps{};
    uint32_t bad_wr = 0;
    ps.response = reinterpret_cast<uint64_t>(&bad_wr);
    ps.wr_count = 0x10000000;
    ps.wqe_size = sizeof(ib_uverbs_send_wr);
    msg.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
    std::memcpy(msg.body, &ps, sizeof(ps));
    HOSTILE("write_overflowing_wr_count", WriteRaw(fd, &msg, sizeof(msg)));
    // Counts no command can have (ib_uverbs_write: shorter than the header, read or not;
    // verify_hdr: longer than the longest extended command).
    HOSTILE("write_shorter_than_header", WriteRaw(fd, edge, 4));
    // The device opened without write access: vfs_write() answers EBADF before the file's own
    // write looks at the bytes (zeros here, which ib_uverbs_write would call EINVAL); opened
    // without read access, a read is EBADF (with it, EINVAL: uverbs files have no read).
    {
      const std::string path = std::string("/dev/infiniband/") + dev->dev_name;
      const unsigned char zeros[16] = {};
      unsigned char into[16];
      const int ro = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      HOSTILE("write_on_read_only_device", ro < 0 ? errno : WriteRaw(ro, zeros, sizeof(zeros)));
      const int wo = open(path.c_str(), O_WRONLY | O_CLOEXEC);
      HOSTILE("read_on_write_only_device",
              wo < 0 ? errno : (read(wo, into, sizeof(into)) < 0 ? errno : 0));
      if (ro >= 0) close(ro);
      if (wo >= 0) close(wo);
    }
    // A create whose answer cannot be copied (a NULL response): the kernel undoes it, EFAULT.
    struct {
      ib_uverbs_cmd_hdr hdr;
      uint64_t response;  // ib_uverbs_alloc_pd, whose driver_data[] pedantic C++ refuses here
    } pd_msg{};
    pd_msg.hdr = {IB_USER_VERBS_CMD_ALLOC_PD, sizeof(pd_msg) / 4,
                  sizeof(ib_uverbs_alloc_pd_resp) / 4};
    HOSTILE("write_create_null_response", WriteRaw(fd, &pd_msg, sizeof(pd_msg)));
    if (g_hostile) {
      std::vector<unsigned char> huge(2 << 20);
      ib_uverbs_cmd_hdr h{IB_USER_VERBS_CMD_QUERY_DEVICE, 4, 0};
      std::memcpy(huge.data(), &h, sizeof(h));
      Report("write_longer_than_any_command", WriteRaw(fd, huge.data(), huge.size()));
    }
  }
  // Not hostile: extended commands with a short core request or response, as an rdma-core
  // older or newer than the kernel sends them. The kernel has no size check for them
  // (uapi_create_write: no req_size / resp_size), zero-fills the request and truncates the
  // answer; run with --setup-only too, as they reach the kernel.
  {
    struct {
      ib_uverbs_cmd_hdr hdr;
      ib_uverbs_ex_cmd_hdr ex;
      ib_uverbs_ex_query_device core;
    } q{};
    static unsigned char answer[512];
    q.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
    q.hdr.in_words = sizeof(q.core) / 8;
    q.hdr.out_words = 4;  // 32 of its 184+ bytes
    q.ex.response = reinterpret_cast<uint64_t>(answer);
    Report("compat_ex_query_device_short_response", WriteRaw(fd, &q, sizeof(q)));
    q.hdr.in_words = 0;  // no core request at all: a request of zeros
    Report("compat_ex_query_device_no_request", WriteRaw(fd, &q, sizeof(q) - sizeof(q.core)));
    auto r = Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, drv,
                     {Attr(UVERBS_ATTR_WRITE_CMD, 4, q.hdr.command),
                      Attr(UVERBS_ATTR_CORE_IN, 4, 0),
                      Attr(UVERBS_ATTR_CORE_OUT, 32, reinterpret_cast<uint64_t>(answer))});
    Report("compat_invoke_ex_query_device_short", Ioctl(fd, r.data()));
    // Attribute flag bits the kernel does not define, which uverbs_set_attr() ignores.
    ib_uverbs_query_port_resp_ex port{};
    r = Request(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, drv,
                {Attr(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1, UVERBS_ATTR_F_MANDATORY | 0x80),
                 Attr(UVERBS_ATTR_QUERY_PORT_RESP, sizeof(port), reinterpret_cast<uint64_t>(&port),
                      UVERBS_ATTR_F_MANDATORY | 0x4)});
    Report("compat_unknown_attr_flags", Ioctl(fd, r.data()));
  }
  // An mmap offset the kernel never handed out.
  {
    if (g_hostile) {
      void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0x7fff0000);
      Report("mmap_unknown_offset", m == MAP_FAILED ? errno : 0);
      if (m != MAP_FAILED) munmap(m, 4096);
      // Over a page the program has mapped, MAP_FIXED_NOREPLACE is do_mmap()'s EEXIST before
      // the driver sees the offset.
      m = mmap(edge - 4096, 4096, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0x7fff0000);
      Report("mmap_fixed_noreplace_over_mapping", m == MAP_FAILED ? errno : 0);
      if (m != MAP_FAILED) munmap(m, 4096);
    }
  }
  // A malformed rdma_cm write (an unknown command).
  {
    const int cm = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
    if (cm >= 0) {
      rdma_ucm_cmd_hdr h{200, 0, 0};
      HOSTILE("rdma_cm_unknown_command", WriteRaw(cm, &h, sizeof(h)));
      // MIGRATE_ID from a file that is not rdma_cm (ucma_migrate_id: EINVAL) or not open
      // (ENOENT).
      struct {
        rdma_ucm_cmd_hdr hdr;
        rdma_ucm_migrate_id body;
      } mig{};
      rdma_ucm_migrate_resp migrated{};
      mig.hdr = {RDMA_USER_CM_CMD_MIGRATE_ID, sizeof(mig.body), sizeof(migrated)};
      mig.body.response = reinterpret_cast<uint64_t>(&migrated);
      int pipefd[2];
      if (pipe2(pipefd, O_CLOEXEC) == 0) {
        mig.body.fd = static_cast<uint32_t>(pipefd[0]);
        HOSTILE("rdma_cm_migrate_from_pipe", WriteRaw(cm, &mig, sizeof(mig)));
        close(pipefd[0]);
        close(pipefd[1]);
      }
      mig.body.fd = 9999;
      HOSTILE("rdma_cm_migrate_from_closed_fd", WriteRaw(cm, &mig, sizeof(mig)));
      HOSTILE("rdma_cm_shorter_than_header", WriteRaw(cm, edge, 4));
      const int cm_ro = open("/dev/infiniband/rdma_cm", O_RDONLY | O_CLOEXEC);
      if (cm_ro >= 0) {
        const unsigned char zeros[16] = {};
        HOSTILE("rdma_cm_write_on_read_only_file", WriteRaw(cm_ro, zeros, sizeof(zeros)));
        close(cm_ro);
      }
      // Not hostile: a count past the request (ucma_write() reads the header's `in` bytes only).
      std::vector<unsigned char> longer(8192);
      rdma_ucm_create_id_resp created{};
      rdma_ucm_create_id create{};
      create.response = reinterpret_cast<uint64_t>(&created);
      create.ps = RDMA_PS_TCP;
      create.qp_type = IBV_QPT_RC;
      const rdma_ucm_cmd_hdr ch{RDMA_USER_CM_CMD_CREATE_ID, sizeof(create), sizeof(created)};
      std::memcpy(longer.data(), &ch, sizeof(ch));
      std::memcpy(longer.data() + sizeof(ch), &create, sizeof(create));
      Report("compat_rdma_cm_count_past_request", WriteRaw(cm, longer.data(), longer.size()));
      // Not hostile: MIGRATE_ID with out = 0. ucma_migrate_id() checks no `out` and writes
      // its response anyway (ENODATA here: it did not).
      const int cm2 = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
      if (cm2 >= 0) {
        mig.hdr.out = 0;
        mig.body.fd = static_cast<uint32_t>(cm);
        mig.body.id = created.id;
        migrated.events_reported = 0xdeadbeef;
        const int err = WriteRaw(cm2, &mig, sizeof(mig));
        Report("compat_rdma_cm_migrate_out_0",
               err == 0 && migrated.events_reported == 0xdeadbeef ? ENODATA : err);
        close(cm2);
      }
      close(cm);
    }
  }
  // Still alive, and the device still works.
  ibv_pd* pd = ibv_alloc_pd(ctx);
  Report("device_still_works", pd != nullptr ? 0 : errno);
  if (pd) ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  std::printf("hostile cases: %d\n", g_cases);
  return 0;
}
