// rxp_mini_sentry: a tiny sandbox runtime that links rdmaproxy through the C API only and
// runs a verbs workload for a simulated app, the way a gVisor-like runtime would.
//
// The app's memory is a memfd mapped twice: the app view (the addresses the app uses, mapped
// PROT_NONE whenever the "kernel" -- this runtime and the library -- runs, so nothing can use
// an app address by accident) and the host view (the runtime's mirror, what the host kernel
// may pin). The app's fd numbers come from the runtime's own table. So every pointer and fd in
// the commands below is really translated: REG_MR's start becomes a host-view address while its
// iova stays the app address, the completion channel / async event fds the kernel creates get
// app numbers, and the app names them by those numbers in CREATE_CQ.
//
// The workload, between two QPs on two devices (node0 and node1 of the VM test bed):
//   GET_CONTEXT (legacy write: async fd out), QUERY_GID_TABLE (ioctl), ALLOC_PD (INVOKE_WRITE),
//   REG_MR (legacy write), CREATE_COMP_CHANNEL (legacy write: fd out), CREATE_CQ (ioctl: comp
//   channel and async fd in, by app number), CREATE_QP (legacy write), MODIFY_QP to RTS
//   (INVOKE_WRITE), an RDMA WRITE and a SEND posted into the rxe queues the library mapped
//   (POST_SEND doorbell, legacy write), REQ_NOTIFY_CQ + completion event read through the app's
//   comp-channel fd, an async event (SQ drained) read through the app's async fd, then every
//   object destroyed and every file closed. The data is checked through the app view.
//
// --no-translation turns the runtime's translation off (host_address answers the app address,
// fds pass through as host numbers): the run must then fail, which the VM test checks.
//
// rxe only: the app plays rdma-core's rxe provider (its queue and WQE formats).
// glibc's netinet/in.h first: rdma_user_rxe.h pulls linux/in.h, which then stands aside.
#include <netinet/in.h>
// clang-format off
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/rdma_user_rxe.h>
#include <sys/mman.h>
#include <unistd.h>
// clang-format on

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "abi/testing/request_builder.h"
#include "rdmaproxy/rdmaproxy.h"

namespace {

using rxp::abi::testing::IoctlBuilder;

[[noreturn]] void Die(const char* step, long err, const char* fmt = nullptr, ...) {
  std::printf("FAIL %s: %s (%s)", step, err < 0 ? strerrorname_np(static_cast<int>(-err)) : "-",
              rxp_last_error());
  if (fmt != nullptr) {
    std::va_list ap;
    va_start(ap, fmt);
    std::printf(": ");
    std::vprintf(fmt, ap);
    va_end(ap);
  }
  std::printf("\n");
  std::fflush(stdout);
  std::exit(1);
}

void Ok(const char* step, const char* fmt, ...) {
  std::printf("ok %s: ", step);
  std::va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
}

// ---- the app's memory: one memfd, two views -----------------------------------------------

class AppMemory {
 public:
  static constexpr size_t kSize = 8 << 20;
  static constexpr size_t kScratch = 1 << 20;  // per-command request / response space

  AppMemory() {
    fd_ = memfd_create("rxp-mini-sentry-app", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, kSize) != 0) Die("app_memory", -errno, "memfd");
    host_ = static_cast<unsigned char*>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    app_ = static_cast<unsigned char*>(mmap(nullptr, kSize, PROT_NONE, MAP_SHARED, fd_, 0));
    if (host_ == MAP_FAILED || app_ == MAP_FAILED) Die("app_memory", -errno, "mmap");
  }
  ~AppMemory() {
    munmap(app_, kSize);
    munmap(host_, kSize);
    close(fd_);
  }

  uint64_t app_base() const { return reinterpret_cast<uint64_t>(app_); }
  uint64_t host_base() const { return reinterpret_cast<uint64_t>(host_); }
  bool Contains(uint64_t address, uint64_t length) const {
    return address >= app_base() && length <= kSize && address - app_base() <= kSize - length;
  }
  unsigned char* Host(uint64_t address) { return host_ + (address - app_base()); }

  // While the app runs its own code its view is accessible; while the runtime / kernel side
  // runs it is not.
  void AppRuns(bool running) {
    if (mprotect(app_, kSize, running ? PROT_READ | PROT_WRITE : PROT_NONE) != 0)
      Die("app_memory", -errno, "mprotect");
  }

  // Long-lived app allocations (buffers, command structs that outlive a call).
  uint64_t Alloc(size_t n, size_t align = 64) {
    heap_ = (heap_ + align - 1) / align * align;
    const uint64_t at = app_base() + kScratch + heap_;
    heap_ += n;
    if (kScratch + heap_ > kSize) Die("app_memory", -ENOMEM, "arena exhausted");
    return at;
  }
  // Per-command space, reused by the next command.
  uint64_t Scratch(size_t n) {
    scratch_ = (scratch_ + 63) / 64 * 64;
    if (scratch_ + n > kScratch) scratch_ = 0;
    const uint64_t at = app_base() + scratch_;
    scratch_ += n;
    return at;
  }

 private:
  int fd_ = -1;
  unsigned char* host_ = nullptr;
  unsigned char* app_ = nullptr;
  size_t heap_ = 0;
  size_t scratch_ = 0;
};

// ---- the runtime: app memory, app fd table, and the callbacks the library calls ------------

struct Runtime {
  AppMemory memory;
  std::map<int, rxp_file*> fds;  // app fd -> library file
  int next_fd = 3;
  bool translate = true;
  rxp_sentry* sentry = nullptr;
  uint64_t expected_refusals = 0;  // the bad calls made on purpose (MapInTwoSteps)

  int Install(rxp_file* file) {
    // Without translation the app would see the host's own fd number.
    const int fd = translate ? next_fd++ : rxp_file_host_fd(file);
    fds[fd] = file;
    return fd;
  }
  rxp_file* File(int app_fd, const char* step) {
    auto it = fds.find(app_fd);
    if (it == fds.end()) Die(step, -EBADF, "app fd %d", app_fd);
    return it->second;
  }
  void Close(int app_fd) {
    rxp_file* f = File(app_fd, "close");
    if (const int r = rxp_close(f); r != 0) Die("close", r);
    fds.erase(app_fd);
  }
};

Runtime& Of(void* app) { return *static_cast<Runtime*>(app); }

int ReadMemory(void* app, uint64_t address, void* buffer, size_t length) {
  Runtime& rt = Of(app);
  if (!rt.memory.Contains(address, length)) return -EFAULT;
  std::memcpy(buffer, rt.memory.Host(address), length);
  return 0;
}
int WriteMemory(void* app, uint64_t address, const void* buffer, size_t length) {
  Runtime& rt = Of(app);
  if (!rt.memory.Contains(address, length)) return -EFAULT;
  std::memcpy(rt.memory.Host(address), buffer, length);
  return 0;
}
int HostAddress(void* app, uint64_t address, uint64_t length, uint64_t* host) {
  Runtime& rt = Of(app);
  if (!rt.memory.Contains(address, length)) return -EFAULT;
  *host = rt.translate ? reinterpret_cast<uint64_t>(rt.memory.Host(address)) : address;
  return 0;
}
int ResolveFd(void* app, int app_fd, rxp_fd_target* target) {
  Runtime& rt = Of(app);
  if (!rt.translate) {  // the app's number taken for a host fd
    *target = {nullptr, app_fd, RXP_FILE_OTHER};
    return 0;
  }
  auto it = rt.fds.find(app_fd);
  if (it == rt.fds.end()) return -EBADF;
  *target = {it->second, -1, RXP_FILE_OTHER};
  return 0;
}
int InstallFd(void* app, rxp_file* file) { return Of(app).Install(file); }

// ---- the app: rdma-core's job, done by hand -----------------------------------------------

class App {
 public:
  explicit App(Runtime& rt) : rt_(rt) {}

  template <typename T>
  uint64_t Put(const T& value) {
    const uint64_t at = rt_.memory.Scratch(sizeof(T));
    std::memcpy(rt_.memory.Host(at), &value, sizeof(T));
    return at;
  }
  uint64_t PutBytes(const std::vector<std::byte>& bytes) {
    const uint64_t at = rt_.memory.Scratch(bytes.size());
    std::memcpy(rt_.memory.Host(at), bytes.data(), bytes.size());
    return at;
  }
  template <typename T>
  T Get(uint64_t at) {
    T v;
    std::memcpy(&v, rt_.memory.Host(at), sizeof(T));
    return v;
  }

  // The app's syscalls, dispatched by the runtime to the library.
  long Ioctl(int fd, const IoctlBuilder& b) {
    const uint64_t at = PutBytes(b.Build());
    return rxp_ioctl(rt_.File(fd, "ioctl"), &rt_, RDMA_VERBS_IOCTL, at);
  }
  long Write(int fd, const std::vector<std::byte>& cmd) {
    const uint64_t at = PutBytes(cmd);
    return rxp_write(rt_.File(fd, "write"), &rt_, at, cmd.size());
  }
  long Read(int fd, uint64_t buffer, uint64_t length) {
    return rxp_read(rt_.File(fd, "read"), &rt_, buffer, length);
  }
  int Open(const std::string& path, const char* step) {
    rxp_file* f = nullptr;
    if (const int r = rxp_open(rt_.sentry, path.c_str(), O_RDWR | O_CLOEXEC, &f); r != 0)
      Die(step, r, "%s", path.c_str());
    return rt_.Install(f);
  }
  // Waits until the app's fd is readable (the app's poll(2)).
  bool WaitReadable(int fd, int ms) {
    rxp_file* f = rt_.File(fd, "poll");
    for (int i = 0; i < ms; ++i) {
      short revents = 0;
      if (rxp_poll(f, POLLIN, &revents) != 0) return false;
      if (revents & POLLIN) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  void* Map(int fd, const mminfo& mi, const char* step) {
    void* at = nullptr;
    if (const int r = rxp_mmap(rt_.File(fd, step), mi.size, PROT_READ | PROT_WRITE, MAP_SHARED,
                               mi.offset, &at);
        r != 0)
      Die(step, r, "mmap offset %#llx", static_cast<unsigned long long>(mi.offset));
    return at;
  }
  // The two-step way (a runtime whose app lives in another process): the library checks the
  // offset and hands out the host fd, the runtime maps it by its own means, then commits. An
  // rxe cookie is spent by the commit: committing or preparing it again is refused.
  void* MapInTwoSteps(int fd, const mminfo& mi, const char* step) {
    rxp_file* f = rt_.File(fd, step);
    int host_fd = -1;
    if (const int r = rxp_mmap_prepare(f, mi.offset, mi.size, PROT_READ | PROT_WRITE, &host_fd))
      Die(step, r, "mmap_prepare offset %#llx", static_cast<unsigned long long>(mi.offset));
    void* at = mmap(nullptr, mi.size, PROT_READ | PROT_WRITE, MAP_SHARED, host_fd,
                    static_cast<off_t>(mi.offset));
    if (at == MAP_FAILED) Die(step, -errno, "mmap of the prepared host fd");
    if (const int r = rxp_mmap_commit(f, mi.offset)) Die(step, r, "mmap_commit");
    if (const int r = rxp_mmap_commit(f, mi.offset); r != -EINVAL)
      Die(step, r, "a second commit of offset %#llx was not refused",
          static_cast<unsigned long long>(mi.offset));
    if (const int r = rxp_mmap_prepare(f, mi.offset, mi.size, PROT_READ, &host_fd); r != -EINVAL)
      Die(step, r, "a spent rxe cookie was prepared again");
    rt_.expected_refusals += 2;
    return at;
  }

  Runtime& rt() { return rt_; }

 private:
  Runtime& rt_;
};

// rxe's shared queue (struct rxe_queue_buf), as rdma-core's providers/rxe/rxe_queue.h uses it.
struct RxeQueue {
  rxe_queue_buf* buf = nullptr;
  size_t size = 0;
  uint32_t Load(const uint32_t& v, int order) const { return __atomic_load_n(&v, order); }
  void* Elem(uint32_t index) const {
    return buf->data + (static_cast<size_t>(index & buf->index_mask) << buf->log2_elem_size);
  }
  // App-produced queues (SQ, RQ): the next free element, or null when full.
  void* ProducerSlot() const {
    const uint32_t prod = Load(buf->producer_index, __ATOMIC_RELAXED);
    const uint32_t cons = Load(buf->consumer_index, __ATOMIC_ACQUIRE);
    if (((prod + 1 - cons) & buf->index_mask) == 0) return nullptr;
    return Elem(prod);
  }
  void Produce() {
    const uint32_t prod = (Load(buf->producer_index, __ATOMIC_RELAXED) + 1) & buf->index_mask;
    __atomic_store_n(&buf->producer_index, prod, __ATOMIC_RELEASE);
  }
  // Kernel-produced queues (CQ): the next element, or null when empty.
  const void* ConsumerSlot() const {
    const uint32_t cons = Load(buf->consumer_index, __ATOMIC_RELAXED);
    const uint32_t prod = Load(buf->producer_index, __ATOMIC_ACQUIRE);
    if (((prod - cons) & buf->index_mask) == 0) return nullptr;
    return Elem(cons);
  }
  void Consume() {
    const uint32_t cons = (Load(buf->consumer_index, __ATOMIC_RELAXED) + 1) & buf->index_mask;
    __atomic_store_n(&buf->consumer_index, cons, __ATOMIC_RELEASE);
  }
};

struct Node {
  std::string name;  // sandbox device
  int fd = -1;       // app fds
  int async_fd = -1;
  int comp_fd = -1;
  ib_uverbs_gid_entry gid{};
  uint32_t pd = 0, mr = 0, cq = 0, qp = 0;
  uint32_t lkey = 0, rkey = 0, qpn = 0;
  uint64_t buffer = 0;  // app address of the node's registered buffer
  RxeQueue cq_queue, sq, rq;
};

constexpr uint32_t kBufferSize = 64 << 10;
constexpr uint32_t kDriver = RDMA_DRIVER_RXE;

void GetContext(App& app, Node& n) {
  const uint64_t resp = app.rt().memory.Scratch(sizeof(ib_uverbs_get_context_resp));
  ib_uverbs_get_context cmd{};
  cmd.response = resp;
  const auto words = static_cast<uint16_t>(sizeof(ib_uverbs_get_context_resp) / 4);
  const long r = app.Write(n.fd, rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_GET_CONTEXT,
                                                                 cmd, {}, words));
  if (r < 0) Die("get_context", r, "%s", n.name.c_str());
  const auto out = app.Get<ib_uverbs_get_context_resp>(resp);
  n.async_fd = static_cast<int>(out.async_fd);
  Ok("get_context", "%s: async event fd is app fd %d (host fd %d), %u comp vectors",
     n.name.c_str(), n.async_fd, rxp_file_host_fd(app.rt().File(n.async_fd, "get_context")),
     out.num_comp_vectors);
}

void QueryGid(App& app, Node& n) {
  constexpr uint32_t kMax = 32;
  const uint64_t entries = app.rt().memory.Scratch(sizeof(ib_uverbs_gid_entry) * kMax);
  const uint64_t count = app.rt().memory.Scratch(8);
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE, kDriver);
  b.Inline(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, sizeof(ib_uverbs_gid_entry), 8)
      .Pointer(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, entries,
               sizeof(ib_uverbs_gid_entry) * kMax)
      .Pointer(UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, count, 8);
  if (const long r = app.Ioctl(n.fd, b); r < 0) Die("query_gid_table", r, "%s", n.name.c_str());
  const auto num = app.Get<uint64_t>(count);
  for (uint64_t i = 0; i < num && i < kMax; ++i) {
    const auto e = app.Get<ib_uverbs_gid_entry>(entries + i * sizeof(ib_uverbs_gid_entry));
    const auto* g = reinterpret_cast<const unsigned char*>(e.gid);
    const bool v4 = std::all_of(g, g + 10, [](unsigned char c) { return c == 0; }) &&
                    g[10] == 0xff && g[11] == 0xff;
    if (e.gid_type == IB_UVERBS_GID_TYPE_ROCE_V2 && v4 && e.port_num == 1) {
      n.gid = e;
      Ok("query_gid_table", "%s: %llu entries, RoCE v2 GID index %u = %u.%u.%u.%u",
         n.name.c_str(), static_cast<unsigned long long>(num), e.gid_index, g[12], g[13], g[14],
         g[15]);
      return;
    }
  }
  Die("query_gid_table", -ENOENT, "%s: no RoCE v2 IPv4 GID on port 1", n.name.c_str());
}

// INVOKE_WRITE: a legacy command in an ioctl (how rdma-core sends most of them today).
template <typename Core, typename Resp>
long InvokeWrite(App& app, int fd, uint32_t command, const Core& core, uint64_t resp) {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, kDriver);
  if constexpr (sizeof(Core) <= 8) {
    uint64_t inl = 0;
    std::memcpy(&inl, &core, sizeof(Core));
    b.Inline(UVERBS_ATTR_CORE_IN, inl, sizeof(Core));
  } else {
    b.Pointer(UVERBS_ATTR_CORE_IN, app.Put(core), sizeof(Core));
  }
  if (resp != 0) b.Pointer(UVERBS_ATTR_CORE_OUT, resp, sizeof(Resp));
  b.Inline(UVERBS_ATTR_WRITE_CMD, command, 8);  // UVERBS_ATTR_CONST_IN: always a u64
  return app.Ioctl(fd, b);
}

void AllocPd(App& app, Node& n) {
  const uint64_t resp = app.rt().memory.Scratch(sizeof(ib_uverbs_alloc_pd_resp));
  ib_uverbs_alloc_pd core{};
  if (const long r = InvokeWrite<ib_uverbs_alloc_pd, ib_uverbs_alloc_pd_resp>(
          app, n.fd, IB_USER_VERBS_CMD_ALLOC_PD, core, resp);
      r < 0)
    Die("alloc_pd", r, "%s", n.name.c_str());
  n.pd = app.Get<ib_uverbs_alloc_pd_resp>(resp).pd_handle;
  Ok("alloc_pd", "%s: handle %u", n.name.c_str(), n.pd);
}

void RegMr(App& app, Node& n) {
  n.buffer = app.rt().memory.Alloc(kBufferSize, 4096);
  const uint64_t resp = app.rt().memory.Scratch(sizeof(ib_uverbs_reg_mr_resp));
  ib_uverbs_reg_mr cmd{};
  cmd.response = resp;
  cmd.start = n.buffer;    // an app address: the library hands the kernel the host view
  cmd.length = kBufferSize;
  cmd.hca_va = n.buffer;   // the iova stays the app's address
  cmd.pd_handle = n.pd;
  cmd.access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const auto words = static_cast<uint16_t>(sizeof(ib_uverbs_reg_mr_resp) / 4);
  if (const long r = app.Write(n.fd, rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_REG_MR,
                                                                     cmd, {}, words));
      r < 0)
    Die("reg_mr", r, "%s: start %#llx (app view)", n.name.c_str(),
        static_cast<unsigned long long>(n.buffer));
  const auto out = app.Get<ib_uverbs_reg_mr_resp>(resp);
  n.mr = out.mr_handle;
  n.lkey = out.lkey;
  n.rkey = out.rkey;
  Ok("reg_mr", "%s: %u KiB at app %#llx (host view %#llx), iova = app address, lkey %#x",
     n.name.c_str(), kBufferSize >> 10, static_cast<unsigned long long>(n.buffer),
     static_cast<unsigned long long>(app.rt().memory.host_base() +
                                     (n.buffer - app.rt().memory.app_base())),
     n.lkey);
}

void CreateCompChannel(App& app, Node& n) {
  const uint64_t resp = app.rt().memory.Scratch(sizeof(ib_uverbs_create_comp_channel_resp));
  ib_uverbs_create_comp_channel cmd{};
  cmd.response = resp;
  const auto words = static_cast<uint16_t>(sizeof(ib_uverbs_create_comp_channel_resp) / 4);
  if (const long r = app.Write(
          n.fd, rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, cmd, {},
                                               words));
      r < 0)
    Die("create_comp_channel", r, "%s", n.name.c_str());
  n.comp_fd = static_cast<int>(app.Get<ib_uverbs_create_comp_channel_resp>(resp).fd);
  Ok("create_comp_channel", "%s: app fd %d (host fd %d)", n.name.c_str(), n.comp_fd,
     rxp_file_host_fd(app.rt().File(n.comp_fd, "create_comp_channel")));
}

void CreateCq(App& app, Node& n, uint64_t user_handle) {
  const uint64_t handle_cqe = app.rt().memory.Scratch(4);
  const uint64_t uresp = app.rt().memory.Scratch(sizeof(rxe_create_cq_resp));
  IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, kDriver);
  b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
      .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 64, 4)
      .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, user_handle, 8)
      .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
      .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, handle_cqe, 4)
      .Handle(UVERBS_ATTR_CREATE_CQ_EVENT_FD, static_cast<uint64_t>(n.async_fd), 0)
      .Pointer(UVERBS_ATTR_UHW_OUT, uresp, sizeof(rxe_create_cq_resp), 0);
  if (n.comp_fd >= 0)
    b.Handle(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, static_cast<uint64_t>(n.comp_fd), 0);
  const uint64_t cmd = app.PutBytes(b.Build());
  const long r = rxp_ioctl(app.rt().File(n.fd, "create_cq"), &app.rt(), RDMA_VERBS_IOCTL, cmd);
  if (r < 0) Die("create_cq", r, "%s", n.name.c_str());
  // The new handle comes back in the HANDLE attribute's data word, in the app's copy.
  const auto attr = app.Get<ib_uverbs_attr>(cmd + sizeof(ib_uverbs_ioctl_hdr));
  n.cq = static_cast<uint32_t>(attr.data);
  const auto mi = app.Get<rxe_create_cq_resp>(uresp).mi;
  n.cq_queue = {static_cast<rxe_queue_buf*>(app.Map(n.fd, mi, "create_cq")), mi.size};
  Ok("create_cq", "%s: handle %u, %u cqes, queue mapped (%u bytes)%s", n.name.c_str(), n.cq,
     app.Get<uint32_t>(handle_cqe), mi.size,
     n.comp_fd >= 0 ? ", on the app's completion channel" : "");
}

void CreateQp(App& app, Node& n, uint64_t user_handle) {
  // The response: the core struct, then rxe's (the legacy ABI appends driver data).
  constexpr size_t kRespSize = sizeof(ib_uverbs_create_qp_resp) + sizeof(rxe_create_qp_resp);
  const uint64_t resp = app.rt().memory.Scratch(kRespSize);
  ib_uverbs_create_qp cmd{};
  cmd.response = resp;
  cmd.user_handle = user_handle;
  cmd.pd_handle = n.pd;
  cmd.send_cq_handle = n.cq;
  cmd.recv_cq_handle = n.cq;
  cmd.max_send_wr = 16;
  cmd.max_recv_wr = 16;
  cmd.max_send_sge = 1;
  cmd.max_recv_sge = 1;
  cmd.qp_type = IBV_QPT_RC;
  const auto words = static_cast<uint16_t>(kRespSize / 4);
  if (const long r = app.Write(
          n.fd, rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_CREATE_QP, cmd, {}, words));
      r < 0)
    Die("create_qp", r, "%s", n.name.c_str());
  const auto core = app.Get<ib_uverbs_create_qp_resp>(resp);
  const auto drv = app.Get<rxe_create_qp_resp>(resp + sizeof(ib_uverbs_create_qp_resp));
  n.qp = core.qp_handle;
  n.qpn = core.qpn;
  n.sq = {static_cast<rxe_queue_buf*>(app.Map(n.fd, drv.sq_mi, "create_qp")), drv.sq_mi.size};
  n.rq = {static_cast<rxe_queue_buf*>(app.MapInTwoSteps(n.fd, drv.rq_mi, "create_qp")),
          drv.rq_mi.size};
  Ok("create_qp", "%s: RC qpn %#x, send and receive queues mapped", n.name.c_str(), n.qpn);
}

void ModifyQp(App& app, Node& n, ib_uverbs_modify_qp m, const char* step) {
  m.qp_handle = n.qp;
  if (const long r = InvokeWrite<ib_uverbs_modify_qp, int>(app, n.fd, IB_USER_VERBS_CMD_MODIFY_QP,
                                                           m, 0);
      r < 0)
    Die(step, r, "%s", n.name.c_str());
}

void Connect(App& app, Node& n, const Node& peer) {
  ib_uverbs_modify_qp init{};
  init.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  init.qp_state = IBV_QPS_INIT;
  init.port_num = 1;
  init.qp_access_flags =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ModifyQp(app, n, init, "modify_qp_init");

  ib_uverbs_modify_qp rtr{};
  rtr.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = IBV_MTU_1024;
  rtr.dest_qp_num = peer.qpn;
  rtr.rq_psn = 0;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  std::memcpy(rtr.dest.dgid, peer.gid.gid, 16);
  rtr.dest.sgid_index = static_cast<uint8_t>(n.gid.gid_index);
  rtr.dest.hop_limit = 64;
  rtr.dest.is_global = 1;
  rtr.dest.port_num = 1;
  ModifyQp(app, n, rtr, "modify_qp_rtr");

  ib_uverbs_modify_qp rts{};
  rts.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = 14;
  rts.retry_cnt = 7;
  rts.rnr_retry = 7;
  rts.sq_psn = 0;
  rts.max_rd_atomic = 1;
  ModifyQp(app, n, rts, "modify_qp_rts");
  Ok("modify_qp", "%s: qpn %#x INIT -> RTR -> RTS, peer qpn %#x", n.name.c_str(), n.qpn,
     peer.qpn);
}

// Where rxe_dma_info's SGE array starts as the kernel (C) lays it out: right after the six u32s.
// Not offsetof(rxe_dma_info, sge): __DECLARE_FLEX_ARRAY wraps the array in a struct with an
// empty member, which is 0 bytes in C but 1 byte (padded to 8) in C++, so a C++ compiler puts
// `sge` 8 bytes later than the kernel does.
constexpr size_t kDmaSgeOffset = offsetof(rxe_dma_info, reserved) + sizeof(__u32);
static_assert(kDmaSgeOffset == 24);

void PutSge(rxe_dma_info& dma, uint64_t addr, uint32_t length, uint32_t lkey) {
  const rxe_sge sge{addr, length, lkey};
  std::memcpy(reinterpret_cast<unsigned char*>(&dma) + kDmaSgeOffset, &sge, sizeof(sge));
  dma.length = length;
  dma.resid = length;
  dma.num_sge = 1;
}

// rxe_post_recv / rxe_post_send of rdma-core's rxe provider: a WQE in the mapped queue; sends
// then ring the doorbell, a POST_SEND write with no work requests (post_send_db).
void PostRecv(Node& n, uint64_t wr_id, uint64_t addr, uint32_t length) {
  auto* wqe = static_cast<rxe_recv_wqe*>(n.rq.ProducerSlot());
  if (wqe == nullptr) Die("post_recv", -ENOMEM, "receive queue full");
  std::memset(wqe, 0, offsetof(std::remove_pointer_t<decltype(wqe)>, dma) + kDmaSgeOffset + sizeof(rxe_sge));
  wqe->wr_id = wr_id;
  PutSge(wqe->dma, addr, length, n.lkey);
  n.rq.Produce();
}

void PostSend(App& app, Node& n, uint64_t wr_id, uint32_t opcode, uint64_t addr,
              uint32_t length, uint64_t remote_addr, uint32_t rkey, const char* step) {
  auto* wqe = static_cast<rxe_send_wqe*>(n.sq.ProducerSlot());
  if (wqe == nullptr) Die(step, -ENOMEM, "send queue full");
  std::memset(wqe, 0, offsetof(std::remove_pointer_t<decltype(wqe)>, dma) + kDmaSgeOffset + sizeof(rxe_sge));
  wqe->wr.wr_id = wr_id;
  wqe->wr.opcode = opcode;
  wqe->wr.send_flags = IBV_SEND_SIGNALED;
  wqe->wr.wr.rdma.remote_addr = remote_addr;
  wqe->wr.wr.rdma.rkey = rkey;
  wqe->iova = remote_addr;
  PutSge(wqe->dma, addr, length, n.lkey);
  n.sq.Produce();

  const uint64_t resp = app.rt().memory.Scratch(sizeof(ib_uverbs_post_send_resp));
  ib_uverbs_post_send db{};
  db.response = resp;
  db.qp_handle = n.qp;
  db.wqe_size = sizeof(ibv_send_wr);
  const auto words = static_cast<uint16_t>(sizeof(ib_uverbs_post_send_resp) / 4);
  if (const long r = app.Write(n.fd, rxp::abi::testing::LegacyWrite(IB_USER_VERBS_CMD_POST_SEND,
                                                                     db, {}, words));
      r < 0)
    Die(step, r, "doorbell");
}

ib_uverbs_wc PollCq(Node& n, const char* step) {
  for (int i = 0; i < 5000; ++i) {
    if (const void* slot = n.cq_queue.ConsumerSlot()) {
      ib_uverbs_wc wc;
      std::memcpy(&wc, slot, sizeof(wc));
      n.cq_queue.Consume();
      if (wc.status != IBV_WC_SUCCESS)
        Die(step, -EIO, "completion status %s", ibv_wc_status_str(static_cast<ibv_wc_status>(wc.status)));
      return wc;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Die(step, -ETIMEDOUT, "no completion on %s within 5 s", n.name.c_str());
}

void ReqNotifyCq(App& app, Node& n) {
  ib_uverbs_req_notify_cq cmd{};
  cmd.cq_handle = n.cq;
  if (const long r = app.Write(n.fd, rxp::abi::testing::LegacyWrite(
                                         IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, cmd));
      r < 0)
    Die("req_notify_cq", r, "%s", n.name.c_str());
}

template <typename F>
void Destroy(App& app, int fd, uint16_t object, uint16_t method, uint16_t handle_attr,
             uint32_t handle, int resp_attr, size_t resp_size, const char* step, F&& describe) {
  IoctlBuilder b(object, method, kDriver);
  b.Handle(handle_attr, handle);
  if (resp_attr >= 0)
    b.Pointer(static_cast<uint16_t>(resp_attr), app.rt().memory.Scratch(resp_size),
              static_cast<uint16_t>(resp_size));
  if (const long r = app.Ioctl(fd, b); r < 0) Die(step, r, "handle %u", handle);
  describe();
}

// The app's /sys from a host snapshot (rxp_sysfs_*): the two devices under the sandbox's
// uverbs names, each naming its IB device and the host node's number, and nothing else.
void CheckSysfs(rxp_sentry* sentry, const std::string& snapshot_path) {
  std::string json;
  if (FILE* f = std::fopen(snapshot_path.c_str(), "r")) {
    char chunk[65536];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) json.append(chunk, n);
    std::fclose(f);
  } else {
    Die("sysfs", -errno, "%s", snapshot_path.c_str());
  }
  rxp_sysfs* sys = nullptr;
  if (int r = rxp_sysfs_create(sentry, json.c_str(), &sys); r != 0) Die("sysfs", r);
  auto read = [&](const std::string& path) {
    char buf[128];
    const long n = rxp_sysfs_read(sys, path.c_str(), 0, buf, sizeof(buf) - 1);
    if (n < 0) Die("sysfs", n, "%s", path.c_str());
    return std::string(buf, static_cast<size_t>(n));
  };
  std::vector<std::string> listed;
  if (int r = rxp_sysfs_readdir(
          sys, "/sys/class/infiniband_verbs",
          [](void* ctx, const char* name, uint32_t, uint64_t) {
            if (std::strncmp(name, "uverbs", 6) == 0)
              static_cast<std::vector<std::string>*>(ctx)->push_back(name);
            return 0;
          },
          &listed);
      r != 0)
    Die("sysfs", r, "readdir");
  std::sort(listed.begin(), listed.end());
  std::vector<std::string> expected;
  std::string summary;
  rxp_device_info info{};
  for (unsigned i = 0; rxp_sentry_device(sentry, i, &info) == 0; ++i) {
    const std::string dir = std::string("/sys/class/infiniband_verbs/") + info.sandbox_name;
    const std::string ibdev = read(dir + "/ibdev"), dev = read(dir + "/dev");
    const std::string want_dev = std::to_string(info.dev_major) + ":" + std::to_string(info.dev_minor) + "\n";
    if (ibdev != std::string(info.ibdev) + "\n" || dev != want_dev)
      Die("sysfs", -EINVAL, "%s: ibdev %s dev %s, want %s %s", dir.c_str(), ibdev.c_str(),
          dev.c_str(), info.ibdev, want_dev.c_str());
    expected.push_back(info.sandbox_name);
    summary += std::string(summary.empty() ? "" : ", ") + info.sandbox_name + " -> " + info.ibdev +
               " (" + std::to_string(info.dev_major) + ":" + std::to_string(info.dev_minor) + ")";
  }
  std::sort(expected.begin(), expected.end());
  if (listed != expected) Die("sysfs", -EINVAL, "infiniband_verbs lists other devices");
  rxp_sysfs_statbuf st{};
  const int hidden = rxp_sysfs_stat(sys, "/sys/class/infiniband_verbs/uverbs0", 0, &st);
  if (std::find(expected.begin(), expected.end(), "uverbs0") == expected.end() && hidden != -ENOENT)
    Die("sysfs", -EINVAL, "the host's uverbs0 is visible (%d)", hidden);
  rxp_sysfs_destroy(sys);
  Ok("sysfs", "%s; nothing else under /sys/class/infiniband_verbs", summary.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool translate = true, trace = false;
  std::string sysfs_snapshot;
  std::vector<std::string> devices;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-translation") {
      translate = false;
    } else if (a == "--trace") {
      trace = true;
    } else if (a == "--sysfs" && i + 1 < argc) {
      sysfs_snapshot = argv[++i];
    } else {
      devices.push_back(a);
    }
  }
  if (devices.size() != 2) {
    std::fprintf(stderr, "usage: rxp_mini_sentry [--no-translation] [--trace] [--sysfs SNAPSHOT] HOST_DEV_A HOST_DEV_B\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);

  Runtime rt;
  rt.translate = translate;
  App app(rt);

  // The sandbox sees the two host devices under names of its own.
  Node a{.name = "uverbs7"}, b{.name = "uverbs3"};
  rxp_config* config = nullptr;
  const rxp_app_ops ops{sizeof(rxp_app_ops), ReadMemory, WriteMemory, HostAddress, ResolveFd,
                        InstallFd};
  const std::string spec = "uverbs7=" + devices[0] + ",uverbs3=" + devices[1];
  if (int r = rxp_config_create(&config); r != 0) Die("config", r);
  if (int r = rxp_config_set_app_ops(config, &ops); r != 0) Die("config", r);
  if (int r = rxp_config_select_devices(config, spec.c_str()); r != 0) Die("config", r);
  rxp_config_set_log(config, [](void*, const char* line) { std::printf("log| %s\n", line); },
                     nullptr);
  if (trace)
    rxp_config_set_trace(config, [](void*, const char* line) { std::printf("trace| %s\n", line); },
                         nullptr);
  if (int r = rxp_sentry_create(config, &rt.sentry); r != 0) Die("sentry", r);
  rxp_config_destroy(config);
  Ok("sentry", "devices %s; app memory: app view %#llx, host view %#llx; translation %s",
     spec.c_str(), static_cast<unsigned long long>(rt.memory.app_base()),
     static_cast<unsigned long long>(rt.memory.host_base()), translate ? "on" : "OFF");
  if (!sysfs_snapshot.empty()) CheckSysfs(rt.sentry, sysfs_snapshot);

  // From here on the app view is only accessible while "the app" touches its data.
  a.fd = app.Open("/dev/infiniband/" + a.name, "open");
  b.fd = app.Open("/dev/infiniband/" + b.name, "open");
  for (Node* n : {&a, &b}) {
    GetContext(app, *n);
    QueryGid(app, *n);
    AllocPd(app, *n);
    RegMr(app, *n);
  }
  CreateCompChannel(app, b);
  CreateCq(app, a, 0xa0);
  CreateCq(app, b, 0xb0);
  CreateQp(app, a, 0xa1);
  CreateQp(app, b, 0xb1);
  Connect(app, a, b);
  Connect(app, b, a);

  // RDMA WRITE: a's buffer -> b's buffer, addressed by b's iova (its app address).
  constexpr uint32_t kWrite = 4096;
  rt.memory.AppRuns(true);
  for (uint32_t i = 0; i < kWrite; ++i)
    reinterpret_cast<unsigned char*>(a.buffer)[i] = static_cast<unsigned char>(i * 7 + 1);
  std::memset(reinterpret_cast<void*>(b.buffer), 0, kBufferSize);
  rt.memory.AppRuns(false);
  PostSend(app, a, 1, IBV_WR_RDMA_WRITE, a.buffer, kWrite, b.buffer, b.rkey, "rdma_write");
  const ib_uverbs_wc wc = PollCq(a, "rdma_write");
  rt.memory.AppRuns(true);
  const bool landed = std::memcmp(reinterpret_cast<void*>(a.buffer),
                                  reinterpret_cast<void*>(b.buffer), kWrite) == 0;
  rt.memory.AppRuns(false);
  if (!landed) Die("rdma_write", -EIO, "the data did not land in b's buffer (app view)");
  Ok("rdma_write", "%u bytes %s -> %s, completion opcode %u, data checked through the app view",
     kWrite, a.name.c_str(), b.name.c_str(), wc.opcode);

  // SEND: b receives into the second half of its buffer; its completion arrives as an event
  // on the app's completion channel fd.
  const char message[] = "hello from the mini-sentry's app";
  const uint64_t recv_at = b.buffer + kBufferSize / 2;
  const uint64_t send_at = a.buffer + kBufferSize / 2;
  rt.memory.AppRuns(true);
  std::memcpy(reinterpret_cast<void*>(send_at), message, sizeof(message));
  rt.memory.AppRuns(false);
  PostRecv(b, 7, recv_at, kBufferSize / 2);
  ReqNotifyCq(app, b);
  PostSend(app, a, 2, IBV_WR_SEND, send_at, sizeof(message), 0, 0, "send");
  (void)PollCq(a, "send");
  if (!app.WaitReadable(b.comp_fd, 5000)) Die("comp_event", -ETIMEDOUT, "no event in 5 s");
  const uint64_t event = rt.memory.Scratch(sizeof(ib_uverbs_comp_event_desc));
  if (const long r = app.Read(b.comp_fd, event, sizeof(ib_uverbs_comp_event_desc));
      r != sizeof(ib_uverbs_comp_event_desc))
    Die("comp_event", r, "read");
  const auto desc = app.Get<ib_uverbs_comp_event_desc>(event);
  if (desc.cq_handle != 0xb0) Die("comp_event", -EIO, "cq user handle %#llx", desc.cq_handle);
  const ib_uverbs_wc recv = PollCq(b, "recv");
  rt.memory.AppRuns(true);
  const bool received = recv.byte_len == sizeof(message) &&
                        std::memcmp(reinterpret_cast<void*>(recv_at), message, sizeof(message)) == 0;
  rt.memory.AppRuns(false);
  if (!received) Die("recv", -EIO, "%u bytes, not the message (app view)", recv.byte_len);
  Ok("send", "%zu bytes received by %s; completion event on app fd %d for CQ handle %#llx",
     sizeof(message), b.name.c_str(), b.comp_fd,
     static_cast<unsigned long long>(desc.cq_handle));

  // Async event: draining a's send queue (RTS -> SQD) raises IB_EVENT_SQ_DRAINED on its
  // context's async event fd.
  ib_uverbs_modify_qp sqd{};
  sqd.attr_mask = IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY;
  sqd.qp_state = IBV_QPS_SQD;
  sqd.en_sqd_async_notify = 1;
  ModifyQp(app, a, sqd, "modify_qp_sqd");
  if (!app.WaitReadable(a.async_fd, 5000)) Die("async_event", -ETIMEDOUT, "no event in 5 s");
  const uint64_t aev = rt.memory.Scratch(sizeof(ib_uverbs_async_event_desc));
  if (const long r = app.Read(a.async_fd, aev, sizeof(ib_uverbs_async_event_desc));
      r != sizeof(ib_uverbs_async_event_desc))
    Die("async_event", r, "read");
  const auto adesc = app.Get<ib_uverbs_async_event_desc>(aev);
  if (adesc.event_type != IBV_EVENT_SQ_DRAINED || adesc.element != 0xa1)
    Die("async_event", -EIO, "event %u for element %#llx", adesc.event_type, adesc.element);
  Ok("async_event", "%s on app fd %d for QP user handle %#llx",
     ibv_event_type_str(static_cast<ibv_event_type>(adesc.event_type)), a.async_fd,
     static_cast<unsigned long long>(adesc.element));

  // Teardown, in rdma-core's order; the queues are unmapped first.
  for (Node* n : {&a, &b}) {
    munmap(n->sq.buf, n->sq.size);
    munmap(n->rq.buf, n->rq.size);
    munmap(n->cq_queue.buf, n->cq_queue.size);
    Destroy(app, n->fd, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, UVERBS_ATTR_DESTROY_QP_HANDLE,
            n->qp, UVERBS_ATTR_DESTROY_QP_RESP, sizeof(ib_uverbs_destroy_qp_resp), "destroy_qp",
            [] {});
    Destroy(app, n->fd, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, UVERBS_ATTR_DESTROY_CQ_HANDLE,
            n->cq, UVERBS_ATTR_DESTROY_CQ_RESP, sizeof(ib_uverbs_destroy_cq_resp), "destroy_cq",
            [] {});
    Destroy(app, n->fd, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, UVERBS_ATTR_DESTROY_MR_HANDLE,
            n->mr, -1, 0, "dereg_mr", [] {});
    Destroy(app, n->fd, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, UVERBS_ATTR_DESTROY_PD_HANDLE,
            n->pd, -1, 0, "dealloc_pd", [] {});
  }
  Ok("destroy", "QPs, CQs, MRs and PDs of both devices");
  rxp_stats stats{};
  rxp_sentry_stats(rt.sentry, &stats);
  for (auto& [fd, file] : std::map<int, rxp_file*>(rt.fds)) rt.Close(fd);
  const uint64_t refused = stats.refused_decode + stats.refused_policy + stats.refused_quota +
                           stats.refused_state;
  Ok("stats", "%llu commands, %llu forwarded, %llu refused, %llu kernel errors, %llu mmaps, "
     "%llu bytes pinned after teardown",
     static_cast<unsigned long long>(stats.commands),
     static_cast<unsigned long long>(stats.forwarded), static_cast<unsigned long long>(refused),
     static_cast<unsigned long long>(stats.kernel_errors),
     static_cast<unsigned long long>(stats.mmaps),
     static_cast<unsigned long long>(stats.pinned_bytes));
  if (refused != rt.expected_refusals || stats.kernel_errors != 0 || stats.pinned_bytes != 0)
    Die("stats", -EIO, "a clean run refuses only the %llu bad calls it makes on purpose and "
        "leaves nothing pinned", static_cast<unsigned long long>(rt.expected_refusals));
  rxp_sentry_destroy(rt.sentry);
  std::printf("mini-sentry: PASS\n");
  return 0;
}
