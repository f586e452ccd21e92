// rxp_verbs_processes DEVICE GID_INDEX: one verbs context shared the ways real programs share it
// -- across fork() and between threads -- with real traffic, and programs spawned while the
// device is open. Prints one line per step with only run-independent facts, so that a native
// run and a run under `rdmaproxy run` compare byte for byte (the harness follows fork, clone
// and exec; docs/harness.md "How it works").
//
//  - fork: the child inherits the command fd (one open file, as natively: uverbs objects belong
//    to the file, not the process), registers its own memory on the parent's PD, connects two
//    RC QPs of its own and posts an RDMA write into the parent's MR. Where the doorbell is a
//    write() (rxe) the kernel refuses the child's post with EACCES (ib_safe_file_access) and
//    the parent's buffer must stay untouched; where it is mapped (mlx5) the parent must find
//    the child's bytes in its buffer (with copy-on-fork the pinned pages stay the parent's).
//    The child leaves a QP behind on the parent's PD and CQ, so the parent's destroys of those
//    get the kernel's EBUSY, and the parent's close releases it.
//  - a child that closes the context: the parent's file, and its objects, live on.
//  - credentials: a child opens a context of its own, posts an RDMA write, changes its
//    credentials (drops a capability from its bounding set, or as a user without CAP_SETPCAP
//    enters a new user namespace) and posts again. Where the doorbell is a write() (rxe) the
//    kernel refuses that post with EACCES: the writer's credentials are no longer the ones the
//    file was opened with (ib_safe_file_access). Its ioctls go on, and a context it opens
//    afterwards takes its posts.
//  - no-op credential calls: a child per call (setuid to its own uid, setresuid(-1, -1, -1),
//    capset of its own capabilities, keyctl, ...) opens the device file, makes the call and
//    writes an unknown command: EACCES where the kernel committed new credentials anyway
//    (ib_safe_file_access compares pointers), EINVAL where it did not. And per thread: a
//    thread's no-op setuid leaves its process's other threads the opener's credentials.
//  - threads: four threads on the one context, each with its own completion channel, CQ and
//    loopback RC pair, sending in rounds and waiting for each completion event (two threads in
//    a blocking ibv_get_cq_event, two after poll()), while the others register and deregister
//    memory -- under the harness each registration stops the whole address space, so a thread
//    asleep in its event read is interrupted and its read restarted.
//  - spawn: posix_spawn (clone(CLONE_VM | CLONE_VFORK) + exec) of a shell while the device is
//    open: its exit status comes back, and no RDMA fd crosses the exec.
//
// Exit status: 0 when every step that must succeed did and all data arrived intact.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "verbs_steps.h"

extern char** environ;

namespace {

using namespace rxp_conformance;

constexpr size_t kForkBuf = 64 * 1024;
constexpr size_t kThreads = 4;
constexpr int kRounds = 16;
constexpr size_t kMsg = 64;
// The fork child's exit status when all went well: whether its RDMA write reached the parent.
constexpr int kChildWrote = 0;
constexpr int kChildDidNotWrite = 3;

struct Port {
  ibv_context* ctx = nullptr;
  ibv_gid gid{};
  int gid_index = 0;
};

uint8_t ForkPattern(size_t i) { return static_cast<uint8_t>(i * 7 + 3); }

// An RC QP's attributes: both queues on `cq`, `depth` work requests of one SGE each way.
ibv_qp_init_attr RcInit(ibv_cq* cq, uint32_t depth) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap.max_send_wr = depth;
  init.cap.max_recv_wr = depth;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.qp_type = IBV_QPT_RC;
  return init;
}

// Two RC QPs on `pd` with `cq`, connected to each other; nullptr members when that failed.
Loopback ConnectedRc(const Port& port, ibv_pd* pd, ibv_cq* cq) {
  ibv_qp_init_attr init = RcInit(cq, 4);
  Loopback rc{ibv_create_qp(pd, &init), ibv_create_qp(pd, &init)};
  if (rc.a == nullptr || rc.b == nullptr || ToInit(rc.a, IBV_QPT_RC) || ToInit(rc.b, IBV_QPT_RC) ||
      RcToRts(rc.a, rc.b->qp_num, port.gid, port.gid_index) ||
      RcToRts(rc.b, rc.a->qp_num, port.gid, port.gid_index)) {
    if (rc.a) ibv_destroy_qp(rc.a);
    if (rc.b) ibv_destroy_qp(rc.b);
    return {};
  }
  return rc;
}

// A signaled RDMA WRITE of `sge` to `remote_addr` under `rkey`.
ibv_send_wr SignaledRdmaWrite(ibv_sge* sge, uint64_t remote_addr, uint32_t rkey) {
  ibv_send_wr wr{};
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  return wr;
}

// The forked child: everything on the inherited context. Returns its exit status.
int ForkChild(const Port& port, ibv_pd* pd, ibv_cq* parent_cq, ibv_mr* parent_mr) {
  void* mem = mmap(nullptr, kForkBuf, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) Die("child_mmap", "mmap");
  auto* buf = static_cast<uint8_t*>(mem);
  for (size_t i = 0; i < kForkBuf; ++i) buf[i] = ForkPattern(i);
  ibv_mr* mr = ibv_reg_mr(pd, buf, kForkBuf, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) Die("child_reg_mr", "ibv_reg_mr on the parent's PD");
  Ok("child_reg_mr", "on the parent's PD");
  ibv_cq* cq = ibv_create_cq(port.ctx, 8, nullptr, nullptr, 0);
  if (cq == nullptr) Die("child_create_cq", "ibv_create_cq");
  Loopback rc = ConnectedRc(port, pd, cq);
  if (rc.a == nullptr) Die("child_connect_rc", "create and connect two RC QPs");
  Ok("child_connect_rc");

  ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(kForkBuf), mr->lkey};
  ibv_send_wr wr =
      SignaledRdmaWrite(&sge, reinterpret_cast<uintptr_t>(parent_mr->addr), parent_mr->rkey);
  ibv_send_wr* bad = nullptr;
  // On a device whose doorbell is a write() on the command fd (rxe: rdma-core's
  // ibv_cmd_post_send), the kernel refuses the child: ib_uverbs_write takes writes only from
  // the opener's credentials (ib_safe_file_access), and a forked child has its own. On one
  // with a mapped doorbell (mlx5) the child posts. Either way the proxy must say the same.
  const int posted = ibv_post_send(rc.a, &wr, &bad);
  Outcome("child_post_send", posted);
  bool wrote = false;
  if (posted == 0) {
    ibv_wc wc{};
    const int polled = PollFor(cq, 1, &wc);
    wrote = polled == 1 && wc.status == IBV_WC_SUCCESS;
    if (wrote)
      Ok("child_rdma_write_to_parent_mr", "%zu bytes", kForkBuf);
    else
      Fail("child_rdma_write_to_parent_mr", "%d completions, status %s", polled,
           ibv_wc_status_str(wc.status));
  }

  // Left behind: a QP on the parent's PD and CQ, which only the file's release destroys.
  ibv_qp_init_attr init = RcInit(parent_cq, 1);
  if (ibv_create_qp(pd, &init) == nullptr) Die("child_leaves_qp", "ibv_create_qp");
  Ok("child_leaves_qp", "on the parent's PD and CQ");

  bool clean = ibv_destroy_qp(rc.a) == 0;
  clean &= ibv_destroy_qp(rc.b) == 0;
  clean &= ibv_destroy_cq(cq) == 0;
  clean &= ibv_dereg_mr(mr) == 0;
  if (clean) Ok("child_teardown");
  else Fail("child_teardown", "a destroy failed");
  if (g_failures != 0) return 1;
  return wrote ? kChildWrote : kChildDidNotWrite;
}

// Waits for `pid` and prints its exit status as step `step`; returns the status, or -1 when a
// signal ended it: a failure, unless `signal_is_outcome` (then printed to be compared).
int Reap(const char* step, pid_t pid, bool signal_is_outcome = false) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) Die(step, "waitpid");
  if (WIFEXITED(status)) {
    Ok(step, "exit %d", WEXITSTATUS(status));
    return WEXITSTATUS(status);
  }
  if (signal_is_outcome)
    std::printf("signal %s SIG%s\n", step, sigabbrev_np(WTERMSIG(status)));
  else
    Fail(step, "killed by signal %d", WTERMSIG(status));
  return -1;
}

void ForkSection(const Port& port) {
  ibv_pd* pd = ibv_alloc_pd(port.ctx);
  if (pd == nullptr) Die("fork_alloc_pd", "ibv_alloc_pd");
  void* mem = mmap(nullptr, kForkBuf, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) Die("fork_mmap", "mmap");
  auto* buf = static_cast<uint8_t*>(mem);
  ibv_mr* mr = ibv_reg_mr(pd, buf, kForkBuf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (mr == nullptr) Die("fork_reg_mr", "ibv_reg_mr");
  ibv_cq* cq = ibv_create_cq(port.ctx, 8, nullptr, nullptr, 0);
  if (cq == nullptr) Die("fork_create_cq", "ibv_create_cq");
  Ok("fork_parent_objects", "PD, MR of %zu bytes, CQ", kForkBuf);

  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) Die("fork", "fork");
  if (child == 0) {
    const int status = ForkChild(port, pd, cq, mr);
    std::fflush(stdout);
    _exit(status);
  }
  // What a device's doorbell allows a forked child is the device's business (a signal, should
  // its doorbell page not survive fork): compared with native, not asserted.
  const int child_status = Reap("fork_child", child, /*signal_is_outcome=*/true);
  if (child_status == kChildWrote) {
    size_t wrong = 0;
    for (size_t i = 0; i < kForkBuf; ++i) wrong += buf[i] != ForkPattern(i);
    if (wrong == 0)
      Ok("parent_sees_child_write", "%zu bytes", kForkBuf);
    else
      Fail("parent_sees_child_write", "%zu of %zu bytes differ", wrong, kForkBuf);
  } else if (child_status == kChildDidNotWrite) {
    size_t touched = 0;
    for (size_t i = 0; i < kForkBuf; ++i) touched += buf[i] != 0;
    if (touched == 0)
      Ok("parent_buffer_untouched", "%zu bytes", kForkBuf);
    else
      Fail("parent_buffer_untouched", "%zu of %zu bytes changed", touched, kForkBuf);
  } else if (child_status > 0) {
    Fail("fork_child", "it failed");
  }

  // The child's QP still uses both: the kernel refuses, and the proxy must say the same.
  Outcome("destroy_cq_used_by_child_qp", ibv_destroy_cq(cq));
  Outcome("dealloc_pd_used_by_child_qp", ibv_dealloc_pd(pd));
  if (ibv_dereg_mr(mr)) Die("fork_dereg_mr", "ibv_dereg_mr");
  Ok("fork_dereg_mr");
  munmap(mem, kForkBuf);

  // A child that closes the context it inherited: the parent's file lives on.
  std::fflush(stdout);
  const pid_t closer = fork();
  if (closer < 0) Die("fork", "fork");
  if (closer == 0) _exit(ibv_close_device(port.ctx) == 0 ? 0 : 1);
  Reap("child_closes_context", closer);
  ibv_pd* after = ibv_alloc_pd(port.ctx);
  ibv_port_attr pattr{};
  if (after != nullptr && ibv_query_port(port.ctx, 1, &pattr) == 0 && ibv_dealloc_pd(after) == 0)
    Ok("context_after_child_close", "port state %s", ibv_port_state_str(pattr.state));
  else
    Fail("context_after_child_close", "%s", std::strerror(errno));
}

// One RDMA write of `len` bytes from the start of `mr` to its second half, on `rc.a`: 0 when it
// completed, or the errno of the post (printed as step `step`, compared, not asserted).
int WriteWithin(const char* step, const Loopback& rc, ibv_cq* cq, ibv_mr* mr, size_t len) {
  auto* base = static_cast<uint8_t*>(mr->addr);
  ibv_sge sge{reinterpret_cast<uintptr_t>(base), static_cast<uint32_t>(len), mr->lkey};
  ibv_send_wr wr = SignaledRdmaWrite(&sge, reinterpret_cast<uintptr_t>(base + len), mr->rkey);
  ibv_send_wr* bad = nullptr;
  const int posted = ibv_post_send(rc.a, &wr, &bad);
  Outcome(step, posted);
  if (posted != 0) return posted;
  ibv_wc wc{};
  const int polled = PollFor(cq, 1, &wc);
  if (polled != 1 || wc.status != IBV_WC_SUCCESS)
    Fail(step, "%d completions, status %s", polled, ibv_wc_status_str(wc.status));
  else if (std::memcmp(base, base + len, len) != 0)
    Fail(step, "the written bytes differ");
  return 0;
}

// A context of the calling process's own on device `name`, with a connected loopback pair and
// a registered buffer, all destroyed with it.
struct OwnContext {
  explicit OwnContext(const char* name, int gid_index) {
    port.ctx = OpenDeviceNamed(name);
    port.gid_index = gid_index;
    if (ibv_query_gid(port.ctx, 1, gid_index, &port.gid)) Die("cred_query_gid", "ibv_query_gid");
    pd = ibv_alloc_pd(port.ctx);
    cq = pd ? ibv_create_cq(port.ctx, 8, nullptr, nullptr, 0) : nullptr;
    mr = cq ? ibv_reg_mr(pd, buf.data(), buf.size(),
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
            : nullptr;
    if (mr == nullptr) Die("cred_objects", "PD, CQ and MR");
    for (size_t i = 0; i < buf.size() / 2; ++i) buf[i] = ForkPattern(i);
    rc = ConnectedRc(port, pd, cq);
    if (rc.a == nullptr) Die("cred_connect_rc", "create and connect two RC QPs");
  }
  OwnContext(const OwnContext&) = delete;
  OwnContext& operator=(const OwnContext&) = delete;
  ~OwnContext() {
    bool clean = ibv_destroy_qp(rc.a) == 0 && ibv_destroy_qp(rc.b) == 0;
    clean = clean && ibv_dereg_mr(mr) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0;
    clean = clean && ibv_close_device(port.ctx) == 0;
    if (!clean) Fail("cred_teardown", "a destroy failed");
  }
  Port port;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  Loopback rc;
  std::array<uint8_t, 8192> buf{};
};

// The child of CredentialSection. Returns its exit status.
int CredentialChild(const char* name, int gid_index) {
  OwnContext before(name, gid_index);
  WriteWithin("cred_post_as_opened", before.rc, before.cq, before.mr, before.buf.size() / 2);
  // Drop CAP_AUDIT_READ from the bounding set (commit_creds: new credentials); a user without
  // CAP_SETPCAP gets EPERM and enters a user namespace of its own instead.
  const char* how = "bounding set";
  if (prctl(PR_CAPBSET_DROP, CAP_AUDIT_READ, 0, 0, 0) != 0) {
    how = "user namespace";
    if (unshare(CLONE_NEWUSER) != 0) {
      Ok("cred_change", "not permitted here (%s)", strerrorname_np(errno));
      return g_failures == 0 ? 0 : 1;
    }
  }
  Ok("cred_change", "through the %s", how);
  WriteWithin("cred_post_after_change", before.rc, before.cq, before.mr, before.buf.size() / 2);
  // Ioctls are not checked (ib_uverbs_ioctl): a PD on the old context.
  ibv_pd* pd = ibv_alloc_pd(before.port.ctx);
  if (pd != nullptr && ibv_dealloc_pd(pd) == 0)
    Ok("cred_ioctl_after_change");
  else
    Fail("cred_ioctl_after_change", "%s", std::strerror(errno));
  {
    OwnContext after(name, gid_index);
    WriteWithin("cred_post_reopened", after.rc, after.cq, after.mr, after.buf.size() / 2);
  }
  return g_failures == 0 ? 0 : 1;
}

void CredentialSection(const char* name, int gid_index) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) Die("fork", "fork");
  if (child == 0) {
    const int status = CredentialChild(name, gid_index);
    std::fflush(stdout);
    _exit(status);
  }
  if (Reap("cred_child", child) != 0) Fail("cred_child", "it failed");
}

// No-op credential calls. Each runs in a child of its own that opened the device file just
// before, and the child then writes to that file: ib_uverbs_write checks the writer first
// (ib_safe_file_access compares struct cred pointers), so a call that commits new credentials
// while changing no value still has the write refused with EACCES natively; otherwise the
// write, of an unknown command, is EINVAL. Which calls commit is the kernel's (a no-op
// setresuid does not since 6.3), and the harness must agree call by call
// (tools/harness/credential_calls.h).
long SameGroups() {
  std::array<gid_t, 256> groups{};
  const int n = getgroups(static_cast<int>(groups.size()), groups.data());
  return n < 0 ? -1 : syscall(SYS_setgroups, n, groups.data());
}
long SameCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, 2> data{};
  return syscall(SYS_capget, &header, data.data()) != 0 ? -1 : syscall(SYS_capset, &header, data.data());
}
struct NoOpCredentialCall {
  const char* step;
  long (*call)();
};
// Raw system calls: in a multi-threaded program glibc's wrappers change every thread's.
const NoOpCredentialCall kNoOpCredentialCalls[] = {
    {"cred_noop_setuid", [] { return syscall(SYS_setuid, getuid()); }},
    {"cred_noop_setgid", [] { return syscall(SYS_setgid, getgid()); }},
    {"cred_noop_setreuid", [] { return syscall(SYS_setreuid, -1, -1); }},
    {"cred_noop_setregid", [] { return syscall(SYS_setregid, -1, -1); }},
    {"cred_noop_setresuid", [] { return syscall(SYS_setresuid, -1, -1, -1); }},
    {"cred_noop_setresgid", [] { return syscall(SYS_setresgid, -1, -1, -1); }},
    {"cred_noop_setfsuid", [] { return syscall(SYS_setfsuid, geteuid()) >= 0 ? 0L : -1L; }},
    {"cred_noop_setgroups", SameGroups},
    {"cred_noop_capset", SameCapabilities},
    {"cred_noop_keepcaps", [] { return long{prctl(PR_SET_KEEPCAPS, prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0, 0, 0)}; }},
    {"cred_noop_securebits", [] { return long{prctl(PR_SET_SECUREBITS, prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), 0, 0, 0)}; }},
    {"cred_noop_ambient_clear", [] { return long{prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)}; }},
    {"cred_query_ambient", [] { return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) < 0 ? -1L : 0L; }},
    {"cred_new_session_keyring", [] { return syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0) < 0 ? -1L : 0L; }},
    {"cred_noop_reqkey", [] { return syscall(SYS_keyctl, KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_DEFAULT) < 0 ? -1L : 0L; }},
    {"cred_query_reqkey", [] { return syscall(SYS_keyctl, KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE) < 0 ? -1L : 0L; }},
    {"cred_no_new_privs", [] { return long{prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)}; }},  // not a credential
};

// The errno of a write() on `fd` of a command word no kernel knows ("none" if it was taken).
const char* UnknownCommandErrno(int fd) {
  const std::array<uint32_t, 4> command{0xfff, 4, 0, 0};  // bits outside the command mask
  return write(fd, command.data(), sizeof command) < 0 ? strerrorname_np(errno) : "none";
}

void NoOpCredentialSection(const ibv_context* ctx) {
  const std::string path = std::string("/dev/infiniband/") + ctx->device->dev_name;
  for (const NoOpCredentialCall& c : kNoOpCredentialCalls) {
    std::fflush(stdout);
    const pid_t child = fork();
    if (child < 0) Die(c.step, "fork");
    if (child == 0) {
      const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) Die(c.step, "open");
      const char* before = UnknownCommandErrno(fd);
      errno = 0;
      const long rc = c.call();
      const char* call = rc < 0 ? strerrorname_np(errno) : "ok";
      Ok(c.step, "call %s; a write() before it %s, after it %s", call, before, UnknownCommandErrno(fd));
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      Fail(c.step, "the child failed");
  }
}

// Credentials are per thread: ib_safe_file_access compares the writing thread's struct cred
// with the file's. In a child of its own, a thread makes a raw no-op setuid (new credentials
// for it alone) and then writes an unknown command to the file opened before it and to one it
// opens itself; the thread that stayed writes to both too. Each file takes writes (EINVAL: the
// command) from one side only; the other side gets EACCES.
struct ChangedThread {
  const char* path = nullptr;
  int earlier = -1;  // opened before the change
  int own = -1;      // opened by the thread after it
  const char* to_earlier = "not run";
  const char* to_own = "not run";
};

void* ChangeThreadCredentials(void* arg) {
  auto* t = static_cast<ChangedThread*>(arg);
  if (syscall(SYS_setuid, getuid()) != 0) return nullptr;
  t->to_earlier = UnknownCommandErrno(t->earlier);
  t->own = open(t->path, O_RDWR | O_CLOEXEC);
  t->to_own = t->own < 0 ? "open failed" : UnknownCommandErrno(t->own);
  return nullptr;
}

void ThreadCredentialSection(const ibv_context* ctx) {
  const std::string path = std::string("/dev/infiniband/") + ctx->device->dev_name;
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) Die("cred_thread", "fork");
  if (child == 0) {
    ChangedThread t;
    t.path = path.c_str();
    t.earlier = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (t.earlier < 0) Die("cred_thread", "open");
    pthread_t thread;
    if (pthread_create(&thread, nullptr, ChangeThreadCredentials, &t) != 0)
      Die("cred_thread", "pthread_create");
    pthread_join(thread, nullptr);
    Ok("cred_thread_changed", "writes to the file opened before: %s; to its own: %s",
       t.to_earlier, t.to_own);
    Ok("cred_thread_unchanged", "writes to the file opened before: %s; to the other's: %s",
       UnknownCommandErrno(t.earlier), t.own < 0 ? "no file" : UnknownCommandErrno(t.own));
    std::fflush(stdout);
    _exit(0);
  }
  Reap("cred_thread_child", child);
}

struct ThreadRun {
  const Port* port = nullptr;
  int index = 0;
  bool blocking = false;  // ibv_get_cq_event straight away, or after poll() says readable
  int rounds = 0;
  int events = 0;
  int registrations = 0;
  const char* failed = nullptr;  // the first step that failed
  int err = 0;
};

// One thread's rounds: a pin (REG_MR + DEREG_MR), then a send between its two QPs whose
// completion it waits for on its channel.
void RunThread(ThreadRun& run) {
  auto fail = [&](const char* step, int err) {
    if (run.failed == nullptr) {
      run.failed = step;
      run.err = err;
    }
  };
  ibv_context* ctx = run.port->ctx;
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  ibv_cq* cq = ch ? ibv_create_cq(ctx, 8, nullptr, ch, 0) : nullptr;
  std::array<uint8_t, 2 * kMsg> buf{};
  ibv_mr* mr = pd ? ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE) : nullptr;
  Loopback rc = (pd && cq) ? ConnectedRc(*run.port, pd, cq) : Loopback{};
  if (pd == nullptr || ch == nullptr || cq == nullptr || mr == nullptr || rc.a == nullptr)
    fail("thread_setup", errno);
  void* scratch = mmap(nullptr, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
  if (scratch == MAP_FAILED) fail("thread_mmap", errno);

  for (int round = 0; round < kRounds && run.failed == nullptr; ++round) {
    static_cast<uint8_t*>(scratch)[round] = 1;
    ibv_mr* pin = ibv_reg_mr(pd, scratch, 4 * 4096, IBV_ACCESS_LOCAL_WRITE);
    if (pin == nullptr || ibv_dereg_mr(pin)) {
      fail("thread_pin", errno);
      break;
    }
    ++run.registrations;

    const auto tag = static_cast<uint8_t>(run.index * 31 + round);
    std::memset(buf.data(), tag, kMsg);
    std::memset(buf.data() + kMsg, 0, kMsg);
    ibv_sge rsge{reinterpret_cast<uintptr_t>(buf.data() + kMsg), kMsg, mr->lkey};
    ibv_recv_wr rwr{};
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    ibv_recv_wr* bad_r = nullptr;
    ibv_sge ssge{reinterpret_cast<uintptr_t>(buf.data()), kMsg, mr->lkey};
    ibv_send_wr swr{};
    swr.sg_list = &ssge;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_SEND;
    swr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad_s = nullptr;
    if (ibv_post_recv(rc.b, &rwr, &bad_r) || ibv_req_notify_cq(cq, 0) ||
        ibv_post_send(rc.a, &swr, &bad_s)) {
      fail("thread_post", errno);
      break;
    }
    if (!run.blocking) {
      pollfd pfd{ch->fd, POLLIN, 0};
      if (poll(&pfd, 1, 10000) != 1) {
        fail("thread_poll_channel", errno ? errno : ETIMEDOUT);
        break;
      }
    }
    ibv_cq* ev_cq = nullptr;
    void* ev_ctx = nullptr;
    if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) || ev_cq != cq) {
      fail("thread_cq_event", errno);
      break;
    }
    ibv_ack_cq_events(cq, 1);
    ++run.events;
    std::array<ibv_wc, 2> wc{};
    if (PollFor(cq, 2, wc.data()) != 2 || wc[0].status != IBV_WC_SUCCESS ||
        wc[1].status != IBV_WC_SUCCESS) {
      fail("thread_completions", EIO);
      break;
    }
    if (std::memcmp(buf.data(), buf.data() + kMsg, kMsg) != 0) {
      fail("thread_data", EIO);
      break;
    }
    ++run.rounds;
  }

  if (rc.a && (ibv_destroy_qp(rc.a) || ibv_destroy_qp(rc.b))) fail("thread_destroy_qp", errno);
  if (mr && ibv_dereg_mr(mr)) fail("thread_dereg_mr", errno);
  if (cq && ibv_destroy_cq(cq)) fail("thread_destroy_cq", errno);
  if (ch && ibv_destroy_comp_channel(ch)) fail("thread_destroy_channel", errno);
  if (pd && ibv_dealloc_pd(pd)) fail("thread_dealloc_pd", errno);
  if (scratch != MAP_FAILED) munmap(scratch, 4 * 4096);
}

void ThreadSection(const Port& port) {
  std::array<ThreadRun, kThreads> runs{};
  std::array<pthread_t, kThreads> threads{};
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].port = &port;
    runs[i].index = static_cast<int>(i);
    runs[i].blocking = i % 2 == 0;
    if (pthread_create(&threads[i], nullptr,
                       [](void* arg) -> void* {
                         RunThread(*static_cast<ThreadRun*>(arg));
                         return nullptr;
                       },
                       &runs[i]) != 0)
      Die("thread_create", "pthread_create");
  }
  for (pthread_t t : threads) pthread_join(t, nullptr);
  for (const ThreadRun& run : runs) {
    char step[32];
    std::snprintf(step, sizeof step, "thread_%d", run.index);
    if (run.failed == nullptr)
      Ok(step, "%s: %d round trips, %d completion events, %d registrations, data intact",
         run.blocking ? "blocking read" : "poll then read", run.rounds, run.events,
         run.registrations);
    else
      Fail(step, "%s: %s after %d rounds", run.failed, strerrorname_np(run.err), run.rounds);
  }
}

// Runs `/bin/sh -c script` with posix_spawn and prints its exit status as step `step`.
void Spawn(const char* step, const char* script) {
  const char* argv[] = {"sh", "-c", script, nullptr};
  pid_t pid = 0;
  if (int err = posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ)) {
    errno = err;
    Die(step, "posix_spawn /bin/sh");
  }
  Reap(step, pid);
}

void SpawnSection(const Port& port) {
  Spawn("spawn_exit_status", "exit 3");
  // The device's fds are close-on-exec (rdma-core opens them so): none may reach the program.
  Spawn("spawn_sees_no_rdma_fd",
        "for f in /proc/$$/fd/*; do case $(readlink \"$f\") in *infiniband*) exit 1;; esac; done; "
        "exit 0");
  ibv_port_attr pattr{};
  if (ibv_query_port(port.ctx, 1, &pattr) == 0)
    Ok("context_after_spawn", "port state %s", ibv_port_state_str(pattr.state));
  else
    Fail("context_after_spawn", "%s", std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rxp_verbs_processes DEVICE GID_INDEX\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Port port;
  port.ctx = OpenDeviceNamed(argv[1]);
  port.gid_index = std::atoi(argv[2]);
  if (ibv_query_gid(port.ctx, 1, port.gid_index, &port.gid)) Die("query_gid", "ibv_query_gid");

  ForkSection(port);
  CredentialSection(argv[1], port.gid_index);
  NoOpCredentialSection(port.ctx);
  ThreadCredentialSection(port.ctx);
  ThreadSection(port);
  SpawnSection(port);

  if (ibv_close_device(port.ctx)) Fail("close", "%s", std::strerror(errno));
  else Ok("close", "with the child's QP still on the file");
  std::printf("%s\n", g_failures == 0 ? "verbs processes passed" : "verbs processes FAILED");
  return g_failures == 0 ? 0 : 1;
}
