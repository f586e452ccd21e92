#include "rdmaproxy/uverbs_file.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "abi/testing/request_builder.h"
#include "rdmaproxy/engine.h"
#include "rdmaproxy/testing/fakes.h"

namespace rxp::proxy {
namespace {

using abi::testing::IoctlBuilder;
using testing::FakeAppMemory;
using testing::FakeFdBridge;
using testing::FakeHostDevice;

constexpr uint64_t kMirror = 0x100000000;  // sentry mode: the host sees app pages 4 GiB up
constexpr uint16_t kOpt = 0;

// The forwarded ioctl as the fake kernel sees it.
struct Forwarded {
  abi::IoctlHeader header{};
  ib_uverbs_attr* attrs = nullptr;
  explicit Forwarded(void* arg) {
    std::memcpy(&header, arg, sizeof(header));
    attrs = reinterpret_cast<ib_uverbs_attr*>(static_cast<std::byte*>(arg) + sizeof(header));
  }
  ib_uverbs_attr* Find(uint16_t id) {
    for (int i = 0; i < header.num_attrs; ++i)
      if (attrs[i].attr_id == id) return &attrs[i];
    return nullptr;
  }
  // What the kernel reads through pointer attribute `id`, as a T.
  template <typename T>
  T Input(uint16_t id) {
    ib_uverbs_attr* a = Find(id);
    REQUIRE(a != nullptr);
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(a->data), sizeof(T));
    return value;
  }
  template <typename T>
  void Output(uint16_t id, const T& value) {
    ib_uverbs_attr* a = Find(id);
    REQUIRE(a != nullptr);
    std::memcpy(reinterpret_cast<void*>(a->data), &value, sizeof(T));
    a->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
  }
};

struct Fixture {
  explicit Fixture(uint64_t mirror = kMirror, PolicyConfig policy = {},
                   uint32_t driver_id = RDMA_DRIVER_RXE)
      : memory(mirror), engine(MakeOptions(std::move(policy))), driver(driver_id) {
    file = engine.OpenUverbs("uverbs0", driver_id);
  }
  EngineOptions MakeOptions(PolicyConfig policy) {
    EngineOptions o;
    o.policy = std::move(policy);
    o.log = [this](std::string_view l) { log.emplace_back(l); };
    o.trace = [this](std::string_view l) { trace.emplace_back(l); };
    return o;
  }
  long Ioctl(const std::vector<std::byte>& request) {
    const uint64_t arg = memory.PutBytes(request);
    last_arg = arg;
    return file->Ioctl(memory, fds, host, arg);
  }
  ib_uverbs_attr AppAttr(int index) const {
    return memory.Get<ib_uverbs_attr>(last_arg + sizeof(abi::IoctlHeader) +
                                      sizeof(ib_uverbs_attr) * static_cast<size_t>(index));
  }

  FakeAppMemory memory;
  FakeFdBridge fds;
  FakeHostDevice host;
  std::vector<std::string> log, trace;
  Engine engine;
  std::unique_ptr<UverbsFile> file;
  uint64_t last_arg = 0;
  uint32_t driver;
};

// INVOKE_WRITE(ALLOC_PD) as rdma-core sends it: CORE_IN, CORE_OUT.
std::vector<std::byte> AllocPd(FakeAppMemory& mem, uint64_t* resp_out,
                               uint32_t driver = RDMA_DRIVER_RXE) {
  // The 8-byte request (just the ignored `response`) travels inline, as rdma-core sends it.
  *resp_out = mem.Alloc(sizeof(ib_uverbs_alloc_pd_resp));
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8)
      .Inline(UVERBS_ATTR_CORE_IN, 0, sizeof(ib_uverbs_alloc_pd))
      .Pointer(UVERBS_ATTR_CORE_OUT, *resp_out, sizeof(ib_uverbs_alloc_pd_resp));
  return b.Build();
}

// The same on an mlx5 device, with `uhw` as the driver request (UHW_IN).
template <typename Req, typename Uhw>
std::vector<std::byte> InvokeWriteMlx5(FakeAppMemory& mem, uint32_t command, const Req& req,
                                       size_t resp_len, const Uhw& uhw) {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_MLX5);
  b.Inline(UVERBS_ATTR_WRITE_CMD, command, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, mem.Put(req), sizeof(req))
      .Pointer(UVERBS_ATTR_CORE_OUT, mem.Alloc(resp_len), static_cast<uint16_t>(resp_len))
      .Pointer(UVERBS_ATTR_UHW_IN, mem.Put(uhw), sizeof(uhw), kOpt);
  return b.Build();
}

// The fake kernel answers an INVOKE_WRITE by writing `resp` to CORE_OUT (sentry mode).
template <typename Resp>
void AnswerCoreOut(Fixture& f, const Resp& resp) {
  std::vector<std::byte> bytes(sizeof(Resp));  // the UAPI structs end in flexible arrays
  std::memcpy(bytes.data(), &resp, sizeof(Resp));
  f.host.on_ioctl = [bytes](void* arg) {
    ib_uverbs_attr* out = Forwarded(arg).Find(UVERBS_ATTR_CORE_OUT);
    REQUIRE(out != nullptr);
    std::memcpy(reinterpret_cast<void*>(out->data), bytes.data(), bytes.size());
    out->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
    return 0L;
  };
}

// INVOKE_WRITE(`command`) with `req` as CORE_IN and a CORE_OUT of `resp_len` bytes.
template <typename Req>
std::vector<std::byte> InvokeWrite(FakeAppMemory& mem, uint32_t command, const Req& req,
                                   size_t resp_len, uint32_t driver = RDMA_DRIVER_RXE) {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, driver);
  b.Inline(UVERBS_ATTR_WRITE_CMD, command, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, mem.Put(req), sizeof(req))
      .Pointer(UVERBS_ATTR_CORE_OUT, mem.Alloc(resp_len), static_cast<uint16_t>(resp_len));
  return b.Build();
}

// Objects the kernel created for the file, through the engine (sentry mode): a PD, a CQ, an
// XRCD and an RC QP with the handles the fake kernel hands out.
void TrackPd(Fixture& f, uint32_t handle) {
  AnswerCoreOut(f, ib_uverbs_alloc_pd_resp{handle});
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(AllocPd(f.memory, &resp, f.driver)) == 0);
}
void TrackCq(Fixture& f, uint32_t handle) {
  ib_uverbs_create_cq req{};
  req.cqe = 16;
  req.comp_channel = -1;
  AnswerCoreOut(f, ib_uverbs_create_cq_resp{handle, 16});
  REQUIRE(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_CREATE_CQ, req,
                              sizeof(ib_uverbs_create_cq_resp), f.driver)) == 0);
}
void TrackXrcd(Fixture& f, uint32_t handle) {
  ib_uverbs_open_xrcd req{};
  req.fd = 0xffffffff;  // no file: a private XRCD
  AnswerCoreOut(f, ib_uverbs_open_xrcd_resp{handle});
  REQUIRE(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_OPEN_XRCD, req,
                              sizeof(ib_uverbs_open_xrcd_resp))) == 0);
}
ib_uverbs_create_qp CreateQpReq(uint8_t qp_type, uint32_t pd_handle, uint32_t cq_handle) {
  ib_uverbs_create_qp req{};
  req.pd_handle = pd_handle;
  req.send_cq_handle = cq_handle;
  req.recv_cq_handle = cq_handle;
  req.max_send_wr = req.max_recv_wr = 1;
  req.max_send_sge = req.max_recv_sge = 1;
  req.qp_type = qp_type;
  return req;
}
long CreateQp(Fixture& f, const ib_uverbs_create_qp& req, uint32_t handle) {
  ib_uverbs_create_qp_resp resp{};
  resp.qp_handle = handle;
  AnswerCoreOut(f, resp);
  return f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_CREATE_QP, req, sizeof(resp), f.driver));
}
void TrackRcQp(Fixture& f, uint32_t handle, uint32_t pd, uint32_t cq) {
  REQUIRE(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_RC, pd, cq), handle) == 0);
}

TEST_CASE("sentry mode: outputs come back through bounce buffers, objects are tracked",
          "[engine]") {
  Fixture f;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    // The kernel must see proxy memory, never the app's addresses.
    const ib_uverbs_attr* out = fw.Find(UVERBS_ATTR_CORE_OUT);
    CHECK(out->data != 0);
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{7});
    return 0L;
  };
  uint64_t resp = 0;
  auto req = AllocPd(f.memory, &resp);
  REQUIRE(f.Ioctl(req) == 0);
  CHECK(f.memory.Get<ib_uverbs_alloc_pd_resp>(resp).pd_handle == 7);
  CHECK(f.file->live_objects() == 1);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 1);
  // The app's attribute array: its own pointer restored, VALID_OUTPUT reported.
  const ib_uverbs_attr a = f.AppAttr(2);
  CHECK(a.data == resp);
  CHECK((a.flags & UVERBS_ATTR_F_VALID_OUTPUT) != 0);
  REQUIRE(f.trace.size() == 1);
  CHECK(f.trace[0] == "ioctl(uverbs0, INVOKE_WRITE ALLOC_PD{}) = 0 {pd_handle=7}");

  // PD.DESTROY of a handle the file never created is refused before the kernel sees it.
  f.host.on_ioctl = [](void*) { return 0L; };
  const int calls = f.host.calls;
  IoctlBuilder bad(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
  bad.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, 99);
  CHECK(f.Ioctl(bad.Build()) == -ENOENT);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.counters().refused_state == 1);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("ENOENT") != std::string::npos);

  // A handle that is negative as the kernel's s64 is EINVAL (lookup_get_idr_uobject()), one
  // past 32 bits that names nothing ENOENT; neither reaches the kernel.
  for (const auto& [handle, err] : {std::pair{~0ull, EINVAL}, std::pair{(1ull << 63) | 7u, EINVAL},
                                    std::pair{(1ull << 40) | 7u, ENOENT}}) {
    IoctlBuilder neg(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
    neg.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, handle);
    CHECK(f.Ioctl(neg.Build()) == -err);
    CHECK(f.host.calls == calls);
  }
  CHECK(f.file->live_objects() == 1);

  IoctlBuilder good(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
  good.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, 7);
  CHECK(f.Ioctl(good.Build()) == 0);
  CHECK(f.file->live_objects() == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

// CQ.CREATE naming app fd `channel` as its completion channel.
// CQ.CREATE of 16 entries with its mandatory attributes; callers add the optional ones.
IoctlBuilder CqCreate(uint32_t driver, uint64_t resp_cqe, uint64_t user_handle = 0) {
  IoctlBuilder cq(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, driver);
  cq.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
      .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 16, 4)
      .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, user_handle, 8)
      .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
      .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, resp_cqe, 4);
  return cq;
}

std::vector<std::byte> CreateCqWithChannel(FakeAppMemory& mem, int channel) {
  IoctlBuilder cq = CqCreate(RDMA_DRIVER_RXE, mem.Alloc(4), 0x1234);
  cq.Handle(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, static_cast<uint64_t>(channel), kOpt);
  return cq.Build();
}

std::vector<std::byte> RegMr(FakeAppMemory& mem, uint64_t buffer, uint64_t length,
                             uint64_t* resp_out,
                             uint32_t access = IB_UVERBS_ACCESS_LOCAL_WRITE) {
  ib_uverbs_reg_mr req{};
  req.start = buffer;
  req.length = length;
  req.hca_va = buffer;
  req.pd_handle = 7;
  req.access_flags = access;
  const uint64_t in = mem.Put(req);
  *resp_out = mem.Alloc(sizeof(ib_uverbs_reg_mr_resp));
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_REG_MR, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, in, sizeof(req))
      .Pointer(UVERBS_ATTR_CORE_OUT, *resp_out, sizeof(ib_uverbs_reg_mr_resp));
  return b.Build();
}

// A host kernel newer than the schema may accept attributes it does not list (a CQ buffer
// address, a umem descriptor): one carrying an app pointer must not reach it untranslated.
// The decoder drops it, as a 6.12 kernel ignores it; the forwarded image has only known ones.
TEST_CASE("an unknown optional attribute is not in the forwarded image", "[engine]") {
  Fixture f;
  int forwarded_attrs = -1;
  bool unknown_seen = true;
  constexpr uint16_t kNewerAttr = 0x30;  // not a QUERY_PORT attribute on 6.12
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    forwarded_attrs = fw.header.num_attrs;
    unknown_seen = fw.Find(kNewerAttr) != nullptr;
    fw.Output(UVERBS_ATTR_QUERY_PORT_RESP, ib_uverbs_query_port_resp_ex{});
    return 0L;
  };
  const uint64_t app_buffer = f.memory.Alloc(4096);
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
      .Pointer(kNewerAttr, app_buffer, 4096, kOpt)
      .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, f.memory.Alloc(sizeof(ib_uverbs_query_port_resp_ex)),
               sizeof(ib_uverbs_query_port_resp_ex));
  REQUIRE(f.Ioctl(b.Build()) == 0);
  CHECK(f.host.calls == 1);
  CHECK(forwarded_attrs == 2);
  CHECK_FALSE(unknown_seen);
}

// uverbs_set_attr() looks at UVERBS_ATTR_F_MANDATORY only: other flag bits pass on the 6.12
// kernel, and are not forwarded, so no newer kernel acts on a meaning the proxy never checked.
TEST_CASE("attribute flags the kernel does not know pass, and are not forwarded", "[engine]") {
  Fixture f;
  uint16_t forwarded = 0xffff;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    forwarded = fw.Find(UVERBS_ATTR_CORE_IN)->flags;
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{4});
    return 0L;
  };
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8)
      .Inline(UVERBS_ATTR_CORE_IN, 0, sizeof(ib_uverbs_alloc_pd),
              UVERBS_ATTR_F_MANDATORY | 0x4 | 0x80)
      .Pointer(UVERBS_ATTR_CORE_OUT, f.memory.Alloc(sizeof(ib_uverbs_alloc_pd_resp)),
               sizeof(ib_uverbs_alloc_pd_resp));
  CHECK(f.Ioctl(b.Build()) == 0);
  CHECK(forwarded == UVERBS_ATTR_F_MANDATORY);
}

PolicyConfig PinnedQuota(uint64_t bytes) {
  PolicyConfig policy;
  policy.quotas.pinned_bytes = bytes;
  return policy;
}

TEST_CASE("REG_MR: start is translated to the host view, hca_va kept, quota enforced",
          "[engine]") {
  Fixture f(kMirror, PinnedQuota(64 * 1024));
  TrackPd(f, 7);
  const uint64_t buffer = f.memory.Alloc(256 * 1024);
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    ib_uverbs_reg_mr seen;
    std::memcpy(&seen, reinterpret_cast<void*>(fw.Find(UVERBS_ATTR_CORE_IN)->data), sizeof(seen));
    CHECK(seen.start == buffer + kMirror);  // pinned through the mirror
    CHECK(seen.hca_va == buffer);           // the IOVA the NIC uses stays the app's VA
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_reg_mr_resp{3, 0x111, 0x222});
    return 0L;
  };
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(RegMr(f.memory, buffer, 32 * 1024, &resp)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);
  // 32 KiB more fits exactly; anything beyond is ENOMEM with the numbers, and not forwarded.
  const int calls = f.host.calls;
  CHECK(f.Ioctl(RegMr(f.memory, buffer, 40 * 1024, &resp)) == -ENOMEM);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.counters().refused_quota == 1);
  CHECK(f.log.back().find("pinned-memory budget of 64 KiB is exceeded") != std::string::npos);
  // Unmapped memory is EFAULT and not forwarded.
  CHECK(f.Ioctl(RegMr(f.memory, 0x1000, 4096, &resp)) == -EFAULT);
  CHECK(f.host.calls == calls);
}

// A legacy create's handler always copies its answer (uverbs_response); to a NULL response that
// is EFAULT, and the kernel undoes the object. The proxy answers so before the kernel; a
// command that makes nothing runs, and the kernel gives the EFAULT.
TEST_CASE("legacy write: a create with a NULL response is EFAULT before the kernel",
          "[engine][write]") {
  Fixture f;
  const int calls = f.host.calls;
  const auto pd = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_ALLOC_PD, ib_uverbs_alloc_pd{0}, {},
                                            sizeof(ib_uverbs_alloc_pd_resp) / 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(pd), pd.size()) == -EFAULT);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
  CHECK(f.log.back().find("response pointer is NULL") != std::string::npos);
  f.host.on_write = [](const void*, size_t) { return long{-EFAULT}; };
  const auto query = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_QUERY_DEVICE,
                                               ib_uverbs_query_device{0}, {},
                                               sizeof(ib_uverbs_query_device_resp) / 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(query), query.size()) ==
        -EFAULT);
  CHECK(f.host.calls == calls + 1);
}

// ib_umem_get() refuses a range that wraps, or spans no page or more than UINT_MAX pages, with
// EINVAL for every driver; the proxy answers the same before its own address check (EFAULT).
TEST_CASE("REG_MR: a range ib_umem_get refuses is EINVAL, not forwarded", "[engine]") {
  Fixture f(kMirror);
  TrackPd(f, 7);
  const uint64_t buffer = f.memory.Alloc(64 * 1024);
  const int calls = f.host.calls;
  uint64_t resp = 0;
  CHECK(f.Ioctl(RegMr(f.memory, buffer, UINT64_MAX - buffer + 2, &resp)) == -EINVAL);
  CHECK(f.log.back().find("wraps around the address space") != std::string::npos);
  CHECK(f.Ioctl(RegMr(f.memory, buffer, UINT64_MAX - buffer - 16, &resp)) == -EINVAL);  // page
  CHECK(f.Ioctl(RegMr(f.memory, buffer, uint64_t{1} << 44, &resp)) == -EINVAL);
  CHECK(f.log.back().find("4294967296 pages") != std::string::npos);
  CHECK(f.Ioctl(RegMr(f.memory, buffer, 0, &resp)) == -EINVAL);
  // A range the kernel would take but that is not app memory is still the proxy's EFAULT.
  CHECK(f.Ioctl(RegMr(f.memory, buffer, uint64_t{1} << 40, &resp)) == -EFAULT);
  CHECK(f.host.calls == calls);
}

// INVOKE_WRITE(REREG_MR) of MR `mr_handle` with `flags` (abi::kMrRereg*), a new range at `buffer`.
std::vector<std::byte> ReregMr(FakeAppMemory& mem, uint32_t mr_handle, uint32_t flags,
                               uint64_t buffer, uint64_t length,
                               uint32_t access = IB_UVERBS_ACCESS_LOCAL_WRITE) {
  ib_uverbs_rereg_mr req{};
  req.mr_handle = mr_handle;
  req.flags = flags;
  req.start = buffer;
  req.length = length;
  req.hca_va = buffer;
  req.access_flags = access;
  return InvokeWrite(mem, IB_USER_VERBS_CMD_REREG_MR, req, sizeof(ib_uverbs_rereg_mr_resp));
}

// INVOKE_WRITE(DEREG_MR) of MR `mr_handle`: a 4-byte request travels inline, as rdma-core
// sends it.
std::vector<std::byte> DeregMr(uint32_t mr_handle) {
  IoctlBuilder dereg(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  dereg.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_DEREG_MR, 8)
      .Inline(UVERBS_ATTR_CORE_IN, mr_handle, sizeof(ib_uverbs_dereg_mr));
  return dereg.Build();
}

// PD 7 and, on it, MR 3: the first 16 KiB of a 256 KiB buffer, which it returns.
uint64_t RegisterMr3(Fixture& f) {
  TrackPd(f, 7);
  const uint64_t buffer = f.memory.Alloc(256 * 1024);
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_reg_mr_resp{3, 0x111, 0x222});
    return 0L;
  };
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(RegMr(f.memory, buffer, 16 * 1024, &resp)) == 0);
  return buffer;
}

// The pinned-bytes quota across ibv_rereg_mr: a new translation pins the new range before the
// kernel lets go of the old one (ib_umem_get of the new umem, then the old umem's release, as
// RLIMIT_MEMLOCK counts it), so the quota must hold both for the command; afterwards the MR
// counts its new length, and a refused or failed rereg leaves the old count. A rereg that
// keeps the translation (access, PD) pins nothing.
TEST_CASE("REREG_MR: the pinned quota follows a new translation, and only a successful one",
          "[engine]") {
  Fixture f(kMirror, PinnedQuota(64 * 1024));
  const uint64_t buffer = RegisterMr3(f);
  REQUIRE(f.engine.usage().pinned_bytes() == 16 * 1024);

  // A new translation of 32 KiB: 16 + 32 fit; the kernel sees the host view, the app's IOVA.
  ib_uverbs_rereg_mr seen{};
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    std::memcpy(&seen, reinterpret_cast<void*>(fw.Find(UVERBS_ATTR_CORE_IN)->data), sizeof(seen));
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  const uint64_t moved = buffer + 64 * 1024;
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, moved, 32 * 1024)) == 0);
  CHECK(seen.start == moved + kMirror);
  CHECK(seen.hca_va == moved);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // The kernel refuses the next one (rxe_rereg_user_mr: EOPNOTSUPP): the MR keeps its 32 KiB.
  f.host.on_ioctl = [](void*) { return -long{EOPNOTSUPP}; };
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 24 * 1024)) == -EOPNOTSUPP);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // 32 KiB held + 40 asked > 64: ENOMEM from the proxy, never forwarded, nothing changes.
  int calls = f.host.calls;
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 40 * 1024)) == -ENOMEM);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // An access change pins nothing, whatever length the request carries.
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, buffer, 1024 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // An MR this file never registered: the kernel's ENOENT, before it sees the command.
  calls = f.host.calls;
  CHECK(f.Ioctl(ReregMr(f.memory, 9, abi::kMrReregTrans, buffer, 4096)) == -ENOENT);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // Deregistering gives back what the MR counts now.
  f.host.on_ioctl = [](void*) { return 0L; };
  REQUIRE(f.Ioctl(DeregMr(3)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_MR) == 0);
}

// A rereg with a new range and the MR's own access flags makes an MR like the old one
// (mlx5_ib_rereg_user_mr: new_access_flags = mr->access_flags): an ODP MR stays ODP and pins
// nothing, a dma-buf MR -- pinning none of the app's memory, but never ODP (REG_DMABUF_MR
// masks ON_DEMAND out) -- is recreated as one that pins the new range.
TEST_CASE("REREG_MR of a dma-buf MR pins its new range, that of an ODP MR nothing", "[engine]") {
  Fixture f(kMirror, PinnedQuota(64 * 1024));
  TrackPd(f, 7);
  f.fds.Add(50, {55, FileKind::kOther, 0});  // the dma-buf
  const uint64_t buffer = f.memory.Alloc(256 * 1024);
  f.host.on_ioctl = [](void* arg) {
    Forwarded fw(arg);
    fw.Find(UVERBS_ATTR_REG_DMABUF_MR_HANDLE)->data = 3;
    fw.Output(UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, uint32_t{0x111});
    fw.Output(UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, uint32_t{0x222});
    return 0L;
  };
  IoctlBuilder dmabuf(UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, RDMA_DRIVER_RXE);
  dmabuf.Handle(UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0)
      .Handle(UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, 7)
      .Inline(UVERBS_ATTR_REG_DMABUF_MR_OFFSET, 0, 8)
      .Inline(UVERBS_ATTR_REG_DMABUF_MR_LENGTH, 1 << 20, 8)
      .Inline(UVERBS_ATTR_REG_DMABUF_MR_IOVA, 0x10000, 8)
      .Inline(UVERBS_ATTR_REG_DMABUF_MR_FD, 50, 4)
      .Inline(UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, IB_UVERBS_ACCESS_LOCAL_WRITE, 4)
      .Pointer(UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, f.memory.Alloc(4), 4)
      .Pointer(UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, f.memory.Alloc(4), 4);
  REQUIRE(f.Ioctl(dmabuf.Build()) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_MR) == 1);
  CHECK(f.engine.usage().pinned_bytes() == 0);

  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 16 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 16 * 1024);
  // ... and so does every later rereg of it, which needs the old and the new range at once.
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 24 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 24 * 1024);
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 48 * 1024)) == -ENOMEM);

  // An ODP MR: its rereg with a new range pins nothing unless the new flags drop ON_DEMAND.
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_reg_mr_resp{4, 0x555, 0x666});
    return 0L;
  };
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(RegMr(f.memory, buffer, 128 * 1024, &resp,
                        IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND)) == 0);
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x777, 0x888});
    return 0L;
  };
  CHECK(f.Ioctl(ReregMr(f.memory, 4, abi::kMrReregTrans, buffer, 128 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 24 * 1024);
  // The access flags ReregMr gives are LOCAL_WRITE alone: a pinned MR of 8 KiB from now on.
  CHECK(f.Ioctl(ReregMr(f.memory, 4, abi::kMrReregTrans | abi::kMrReregAccess, buffer,
                        8 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);
  CHECK(f.Ioctl(ReregMr(f.memory, 4, abi::kMrReregTrans, buffer, 40 * 1024)) == -ENOMEM);
}

// mlx5_ib_rereg_user_mr: new access flags alone keep the MR's umem, so a pinned MR given
// ON_DEMAND stays pinned; a later rereg with a new range and no ACCESS takes the MR's stored
// flags and makes an ODP MR (create_mr_user), which pins nothing. Flags that lose ON_DEMAND
// before then leave a pinned MR whose next range is pinned.
TEST_CASE("an ACCESS-only REREG_MR keeps the MR's pins and sets what a later rereg makes",
          "[engine]") {
  Fixture f(kMirror, PinnedQuota(64 * 1024));
  const uint64_t buffer = RegisterMr3(f);  // 16 KiB pinned
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  const uint32_t odp = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0, odp)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 16 * 1024);  // the same umem, still pinned
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 16 * 1024);
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 32 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);  // pinned: ON_DEMAND went first

  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0, odp)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);
  // A new range of 60 KiB with the stored flags: ODP, so 32 + 60 KiB is never asked for.
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 60 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);

  // Flags without ON_DEMAND for an ODP MR: 6.12 recreates it from the request's range, which
  // the proxy makes empty, so the kernel refuses; nothing changes.
  f.host.on_ioctl = [](void*) { return -EINVAL; };
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0)) == -EINVAL);
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 60 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);
}

// Threads of a traced program: two reregs of one MR begun before either settles. The kernel
// runs them one after the other in an order the proxy cannot see (or answers the second
// EBUSY), so the proxy answers the second EBUSY itself; the MR's charge is the first's.
TEST_CASE("a second rereg of an MR begun while one is in flight is EBUSY", "[engine]") {
  Fixture f(kMirror, PinnedQuota(64 * 1024));
  const uint64_t buffer = RegisterMr3(f);  // 16 KiB pinned
  const uint32_t odp = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  auto first = f.file->BeginIoctl(
      f.memory, f.fds, f.memory.PutBytes(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0, odp)));
  REQUIRE(first.ok());
  const auto busy = f.file->BeginIoctl(
      f.memory, f.fds,
      f.memory.PutBytes(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 48 * 1024)));
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.error().errnum == EBUSY);
  CHECK(f.engine.usage().pinned_bytes() == 16 * 1024);  // the refused one reserved nothing

  auto image = (*first)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**first, 0, image, reinterpret_cast<uint64_t>(image.data()),
                           f.memory, f.fds) == 0);
  // Settled: the next rereg is no longer busy (here ODP by the flags just set).
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 48 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);

  // A refused begin (over the quota) leaves no rereg in flight either.
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregAccess, 0, 0)) == 0);  // pinned from now
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 128 * 1024)) == -ENOMEM);
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 32 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);
}

// Threads of a traced program: one rereg's MR 3 while another deregisters it and a third
// registers a new MR. The kernel may run the rereg last, after the new MR took the freed
// handle 3 (ib_uverbs_rereg_mr looks the handle up when it runs): it would move the NEW MR,
// which the proxy, settling in exit-stop order, could not know. So while a rereg or a destroy
// of an object is in flight, the other is the kernel's EBUSY (both take its write lock), and
// the handle is not freed under a rereg.
TEST_CASE("a destroy and a rereg of one MR are not in flight at once", "[engine]") {
  Fixture f(kMirror, PinnedQuota(256 * 1024));
  const uint64_t buffer = RegisterMr3(f);  // A
  auto rereg = f.file->BeginIoctl(
      f.memory, f.fds,
      f.memory.PutBytes(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 32 * 1024)));
  REQUIRE(rereg.ok());
  CHECK(f.engine.usage().pinned_bytes() == 48 * 1024);  // both ranges held while it runs
  f.host.on_ioctl = [](void*) { return 0L; };
  int calls = f.host.calls;
  CHECK(f.Ioctl(DeregMr(3)) == -EBUSY);
  CHECK(f.host.calls == calls);  // not forwarded
  auto image = (*rereg)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**rereg, 0, image, reinterpret_cast<uint64_t>(image.data()),
                           f.memory, f.fds) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);

  // The other way round: a rereg begun while the dereg is in flight.
  auto dereg = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(DeregMr(3)));
  REQUIRE(dereg.ok());
  calls = f.host.calls;
  CHECK(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 8 * 1024)) == -EBUSY);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.usage().pinned_bytes() == 32 * 1024);  // the refused one reserved nothing
  image = (*dereg)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**dereg, 0, image, reinterpret_cast<uint64_t>(image.data()),
                           f.memory, f.fds) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_MR) == 0);

  // A new MR under the freed handle is not busy: its own rereg and dereg go through.
  uint64_t resp = 0;
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_reg_mr_resp{3, 0x555, 0x666});
    return 0L;
  };
  REQUIRE(f.Ioctl(RegMr(f.memory, buffer, 8 * 1024, &resp)) == 0);  // B
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x333, 0x444});
    return 0L;
  };
  REQUIRE(f.Ioctl(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 16 * 1024)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 16 * 1024);
  f.host.on_ioctl = [](void*) { return 0L; };
  REQUIRE(f.Ioctl(DeregMr(3)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);
}

// A thread of a traced program killed between its command's entry and exit stops (another
// thread's exit_group or execve, SIGKILL): no exit stop settles the command. When the file
// closes, the kernel ends whatever it made, so its reservation is given back with the rest.
TEST_CASE("a begun command that never settles gives its reservation back when forsaken",
          "[engine]") {
  Fixture f(kMirror, PinnedQuota(256 * 1024));
  const uint64_t buffer = RegisterMr3(f);  // 16 KiB
  uint64_t resp = 0;
  auto reg = f.file->BeginIoctl(f.memory, f.fds,
                                f.memory.PutBytes(RegMr(f.memory, buffer, 32 * 1024, &resp)));
  REQUIRE(reg.ok());
  auto rereg = f.file->BeginIoctl(
      f.memory, f.fds,
      f.memory.PutBytes(ReregMr(f.memory, 3, abi::kMrReregTrans, buffer, 64 * 1024)));
  REQUIRE(rereg.ok());
  CHECK(f.engine.usage().pinned_bytes() == (16 + 32 + 64) * 1024);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_MR) == 2);
  // Its object stays busy until then: the rereg's outcome is unknown.
  f.host.on_ioctl = [](void*) { return 0L; };
  CHECK(f.Ioctl(DeregMr(3)) == -EBUSY);
  f.file->Forsake(**reg);
  f.file->Forsake(**rereg);
  f.file->Closed();
  CHECK(f.engine.usage().pinned_bytes() == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_MR) == 0);
}

TEST_CASE("a refused call of a method the device lacks gets the kernel's answer", "[engine]") {
  PolicyConfig policy;
  policy.deny.insert("DEALLOC_MW");
  Fixture f(kMirror, policy);
  // The device lacks REREG_MR, DEALLOC_MW and MW.DESTROY: the kernel's method lookup fails
  // for them (EOPNOTSUPP for a legacy command, EPROTONOSUPPORT for an ioctl method).
  f.host.on_probe = [](const abi::IoctlHeader& h, uint64_t write_cmd) {
    if (h.num_attrs == 0)
      return h.object_id == UVERBS_OBJECT_MW && h.method_id == UVERBS_METHOD_MW_DESTROY
                 ? -long{EPROTONOSUPPORT}
                 : -long{EINVAL};
    return write_cmd == IB_USER_VERBS_CMD_REREG_MR || write_cmd == IB_USER_VERBS_CMD_DEALLOC_MW
               ? -long{EOPNOTSUPP}
               : -long{ENOSPC};
  };
  const uint64_t buffer = f.memory.Alloc(4096);

  // REREG_MR of an MR the file never registered, on a device without rereg: the kernel never
  // looks at the handle. One probe; the answer is kept.
  CHECK(f.Ioctl(ReregMr(f.memory, 9, abi::kMrReregAccess, buffer, 4096)) == -EOPNOTSUPP);
  CHECK(f.host.probes == 1);
  CHECK(f.log.back().find("does not implement") != std::string::npos);
  CHECK(f.engine.counters().refused_decode == 1);
  CHECK(f.Ioctl(ReregMr(f.memory, 9, abi::kMrReregAccess, buffer, 4096)) == -EOPNOTSUPP);
  CHECK(f.host.probes == 1);
  // The same command written: the same answer, from the same probe.
  ib_uverbs_rereg_mr rereg{};
  rereg.response = f.memory.Alloc(sizeof(ib_uverbs_rereg_mr_resp));
  rereg.mr_handle = 9;
  rereg.flags = abi::kMrReregAccess;
  const auto written = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_REREG_MR, rereg, {},
                                                 sizeof(ib_uverbs_rereg_mr_resp) / 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), written.size()) ==
        -EOPNOTSUPP);
  CHECK(f.host.probes == 1);
  // Malformed too (its header's in_words lies about the write's length): ib_uverbs_write()
  // looks the method up before verify_hdr(), so EOPNOTSUPP still, not the decoder's EINVAL.
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), written.size() - 4) ==
        -EOPNOTSUPP);
  CHECK(f.host.probes == 1);
  CHECK(f.log.back().find("REREG_MR: the device does not implement it") != std::string::npos);
  // Shorter than a header: the kernel's EINVAL comes first.
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), 4) == -EINVAL);

  // DEREG_MR, which the device has: the proxy's own answer for the handle.
  CHECK(f.Ioctl(DeregMr(9)) == -ENOENT);
  CHECK(f.host.probes == 2);

  // An ioctl method the device lacks: EPROTONOSUPPORT, as the kernel's method lookup says.
  IoctlBuilder mw(UVERBS_OBJECT_MW, UVERBS_METHOD_MW_DESTROY, RDMA_DRIVER_RXE);
  mw.Handle(UVERBS_ATTR_DESTROY_MW_HANDLE, 5);
  CHECK(f.Ioctl(mw.Build()) == -EPROTONOSUPPORT);
  CHECK(f.host.probes == 3);

  // A method the policy denies is never probed: the denial stands.
  ib_uverbs_dealloc_mw dealloc{};
  dealloc.mw_handle = 5;
  IoctlBuilder denied(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  denied.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_DEALLOC_MW, 8)
      .Inline(UVERBS_ATTR_CORE_IN, dealloc.mw_handle, sizeof(dealloc));
  CHECK(f.Ioctl(denied.Build()) == -EPERM);
  CHECK(f.host.probes == 3);

  // Without a descriptor to ask (a harness that holds none), the proxy's own errno.
  Fixture g;
  auto command = std::make_unique<UverbsCommand>();
  auto begun = g.file->BeginIoctl(g.memory, g.fds,
                                  g.memory.PutBytes(ReregMr(g.memory, 9, abi::kMrReregAccess,
                                                            g.memory.Alloc(4096), 4096)),
                                  *command);
  REQUIRE_FALSE(begun.ok());
  CHECK(begun.error().errnum == ENOENT);
  CHECK(g.host.probes == 0);
  // Nothing of the app's reached the kernel.
  CHECK(f.host.calls == 0);
}

TEST_CASE("identity mode: the image carries the app's own addresses", "[engine]") {
  Fixture f(0);
  const uint64_t scratch = 0x600000000000;
  {  // PD 7: in identity mode the kernel answers straight into the app's CORE_OUT.
    uint64_t pd_resp = 0;
    auto pd = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(AllocPd(f.memory, &pd_resp)));
    REQUIRE(pd.ok());
    const ib_uverbs_alloc_pd_resp answer{7};
    REQUIRE(f.memory.Write(pd_resp, std::as_bytes(std::span(&answer, 1))).ok());
    auto image = (*pd)->image.Relocated(scratch);
    REQUIRE(f.file->Complete(**pd, 0, image, scratch, f.memory, f.fds) == 0);
  }
  const uint64_t buffer = f.memory.Alloc(8192);
  uint64_t resp = 0;
  auto req = RegMr(f.memory, buffer, 8192, &resp);
  const uint64_t arg = f.memory.PutBytes(req);
  auto c = f.file->BeginIoctl(f.memory, f.fds, arg);
  REQUIRE(c.ok());
  // Relocate at a pretend scratch address and check CORE_OUT still points to the app.
  auto image = (*c)->image.Relocated(scratch);
  Forwarded fw(image.data());
  CHECK(fw.Find(UVERBS_ATTR_CORE_OUT)->data == resp);
  CHECK(fw.Find(UVERBS_ATTR_CORE_IN)->data >= scratch);  // the validated copy
  ib_uverbs_reg_mr seen;
  std::memcpy(&seen, image.data() + (fw.Find(UVERBS_ATTR_CORE_IN)->data - scratch), sizeof(seen));
  CHECK(seen.start == buffer);
  // The kernel answers straight into the app's buffer.
  const std::array<uint32_t, 3> answer{5, 1, 2};  // mr_handle, lkey, rkey
  REQUIRE(f.memory.Write(resp, std::as_bytes(std::span(answer))).ok());
  CHECK(f.file->Complete(**c, 0, image, scratch, f.memory, f.fds) == 0);
  CHECK(f.file->live_objects() == 2);  // the PD and the MR
  CHECK(f.engine.usage().pinned_bytes() == 8192);
}

TEST_CASE("fds: completion channels must be this file's, new fds become app fds", "[engine]") {
  Fixture f;
  f.fds.Add(3, {33, FileKind::kOther, 0});                    // some non-RDMA fd
  f.fds.Add(4, {44, FileKind::kCompChannel, f.file->id()});  // a channel of this file
  f.fds.Add(5, {55, FileKind::kCompChannel, 999});           // another file's channel
  auto cq = [&](int channel) {
    const uint64_t resp = f.memory.Alloc(4);
    IoctlBuilder b = CqCreate(RDMA_DRIVER_RXE, resp, 0x1234);
    b.Handle(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, static_cast<uint64_t>(channel), kOpt);
    return b.Build();
  };
  int seen_channel = -1;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_channel = static_cast<int>(fw.Find(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL)->data_s64);
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 12;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  CHECK(f.Ioctl(cq(3)) == -EBADF);
  CHECK(f.Ioctl(cq(5)) == -EBADF);
  CHECK(f.Ioctl(cq(77)) == -EBADF);
  CHECK(f.host.calls == 0);
  REQUIRE(f.Ioctl(cq(4)) == 0);
  CHECK(seen_channel == 44);          // the kernel got the host fd
  CHECK(f.AppAttr(5).data == 4);      // the app sees its own fd number again
  CHECK(f.AppAttr(0).data == 12);     // and the new handle

  // ASYNC_EVENT.ALLOC: the kernel's new fd becomes an app fd of kind kAsyncEvent.
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    fw.Find(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE)->data = 66;
    return 0L;
  };
  IoctlBuilder ev(UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, RDMA_DRIVER_RXE);
  ev.Handle(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0);
  REQUIRE(f.Ioctl(ev.Build()) == 0);
  const int app_fd = static_cast<int>(f.AppAttr(0).data);
  REQUIRE(f.fds.fds().count(app_fd) == 1);
  CHECK(f.fds.fds().at(app_fd).host_fd == 66);
  CHECK(f.fds.fds().at(app_fd).kind == FileKind::kAsyncEvent);

  // A new fd the app cannot be given: the command fails with the bridge's errno, and the app
  // reads -1 where the kernel wrote its fd -- never the host's number, which is closed.
  f.fds.adopt_errno = EMFILE;
  IoctlBuilder ev2(UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, RDMA_DRIVER_RXE);
  ev2.Handle(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0);
  f.trace.clear();
  CHECK(f.Ioctl(ev2.Build()) == -EMFILE);
  CHECK(static_cast<int64_t>(f.AppAttr(0).data) == -1);
  CHECK(f.fds.closed == std::vector<int>{66});
  // The trace says what the app saw, not what the kernel answered.
  REQUIRE(f.trace.size() == 1);
  CHECK_THAT(f.trace[0], Catch::Contains("= -1 EMFILE"));
}

TEST_CASE("policy: denied methods and content rules are refused before the kernel",
          "[engine][policy]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  IoctlBuilder devx(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_EQN, RDMA_DRIVER_MLX5);
  devx.Inline(MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC, 0, 4)
      .Pointer(MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN, f.memory.Alloc(4), 4);
  CHECK(f.Ioctl(devx.Build()) == -EPROTONOSUPPORT);
  // A raw-packet QP.
  const uint64_t cap = f.memory.Put(ib_uverbs_qp_cap{1, 1, 1, 1, 0});
  IoctlBuilder qp(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, RDMA_DRIVER_MLX5);
  qp.Handle(UVERBS_ATTR_CREATE_QP_HANDLE, 0)
      .Inline(UVERBS_ATTR_CREATE_QP_USER_HANDLE, 0, 8)
      .Pointer(UVERBS_ATTR_CREATE_QP_CAP, cap, sizeof(ib_uverbs_qp_cap))
      .Inline(UVERBS_ATTR_CREATE_QP_TYPE, IB_UVERBS_QPT_RAW_PACKET, 8)
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_CAP, f.memory.Alloc(20), 20)
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, f.memory.Alloc(4), 4);
  CHECK(f.Ioctl(qp.Build()) == -EPERM);
  // GET_CONTEXT asking for a DEVX uid: EINVAL, a device without DEVX (mlx5_ib_devx_create),
  // never EPROTONOSUPPORT, which libibverbs takes for "no GET_CONTEXT method".
  mlx5_ib_alloc_ucontext_req_v2 uctx{};
  uctx.flags = MLX5_IB_ALLOC_UCTX_DEVX;
  IoctlBuilder ctx(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, RDMA_DRIVER_MLX5);
  ctx.Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(uctx), sizeof(uctx), kOpt)
      .Pointer(UVERBS_ATTR_UHW_OUT, f.memory.Alloc(sizeof(mlx5_ib_alloc_ucontext_resp)),
               sizeof(mlx5_ib_alloc_ucontext_resp), kOpt);
  CHECK(f.Ioctl(ctx.Build()) == -EINVAL);
  CHECK(f.host.calls == 0);
  CHECK(f.engine.counters().refused_policy == 3);
  // Without the flag, GET_CONTEXT goes through.
  uctx.flags = 0;
  IoctlBuilder ctx2(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, RDMA_DRIVER_MLX5);
  ctx2.Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(uctx), sizeof(uctx), kOpt);
  CHECK(f.Ioctl(ctx2.Build()) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);
}

// An ESP flow action's ENCAP names a user-space list the core copies from (val_ptr, next_ptr);
// mlx5, the one driver with ESP actions, refuses any encap. Even where the policy allows the
// method, such a request gets that answer here and never reaches the kernel.
TEST_CASE("policy: an ESP flow action with ENCAP is refused whatever the policy", "[engine][policy]") {
  PolicyConfig policy;
  policy.allow.insert("UVERBS_METHOD_FLOW_ACTION_ESP_CREATE");
  Fixture f(kMirror, policy, RDMA_DRIVER_MLX5);
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Find(UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE)->data = 3;
    return 0L;
  };
  const auto esp = [&](bool encap) {
    ib_uverbs_attr keymat{};
    keymat.attr_id = UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT;
    keymat.len = sizeof(ib_uverbs_flow_action_esp_keymat_aes_gcm);
    keymat.attr_data.enum_data.elem_id = IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM;
    keymat.flags = UVERBS_ATTR_F_MANDATORY;
    keymat.data = f.memory.Put(ib_uverbs_flow_action_esp_keymat_aes_gcm{});
    IoctlBuilder b(UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_CREATE,
                   RDMA_DRIVER_MLX5);
    b.Handle(UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE, 0)
        .Pointer(UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS, f.memory.Put(ib_uverbs_flow_action_esp{}),
                 sizeof(ib_uverbs_flow_action_esp))
        .Raw(keymat);
    if (encap) {
      ib_uverbs_flow_action_esp_encap e{};
      e.val_ptr = f.memory.Alloc(64);
      e.len = 64;
      e.type = 0x30;  // IB_FLOW_SPEC_IPV4 (ib_flow_spec_type, a kernel-internal enum)
      b.Pointer(UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP, f.memory.Put(e), sizeof(e), kOpt);
    }
    return f.Ioctl(b.Build());
  };
  CHECK(esp(true) == -EOPNOTSUPP);
  CHECK(f.host.calls == 0);
  CHECK(f.log.back().find("encapsulation") != std::string::npos);
  CHECK(esp(false) == 0);  // the rule looks at ENCAP alone
  CHECK(f.host.calls == 1);
}

// mlx5 UAR_OBJ_ALLOC as libmlx5 sends it, and the fake kernel's answer: `handle`, an mmap
// entry of `length` bytes at `offset`.
std::vector<std::byte> UarAlloc(FakeAppMemory& mem) {
  IoctlBuilder b(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC, RDMA_DRIVER_MLX5);
  b.Handle(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0)
      .Inline(MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, 8)
      .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, mem.Alloc(4), 4)
      .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, mem.Alloc(4), 4)
      .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, mem.Alloc(8), 8);
  return b.Build();
}
void AnswerUarAlloc(Forwarded& fw, uint32_t handle, uint32_t length, uint64_t offset) {
  fw.Find(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE)->data = handle;
  fw.Output(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, uint32_t{1});
  fw.Output(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, length);
  fw.Output(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, offset);
}

// mlx5 UAR_OBJ_ALLOC and VAR_OBJ_ALLOC hand out an mmap offset in the file's entry range, which
// the kernel maps until the object is destroyed (rdma_user_mmap_entry_remove); so does the
// proxy, and a later object handed the same offset makes it mappable again.
TEST_CASE("mlx5: UAR and VAR mmap entries are mappable while their object lives",
          "[engine][mmap][mlx5]") {
  PolicyConfig policy;
  policy.allow.insert("MLX5_IB_METHOD_VAR_OBJ_ALLOC");
  policy.allow.insert("MLX5_IB_METHOD_VAR_OBJ_DESTROY");
  Fixture f(kMirror, policy, RDMA_DRIVER_MLX5);
  const uint64_t kEntry = uint64_t{(9u << 8) | 2} << 12;  // command 9: the entry range
  uint32_t next_handle = 4;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    if (fw.header.object_id == MLX5_IB_OBJECT_UAR &&
        fw.header.method_id == MLX5_IB_METHOD_UAR_OBJ_ALLOC) {
      AnswerUarAlloc(fw, next_handle++, 4096, kEntry);
    } else if (fw.header.object_id == MLX5_IB_OBJECT_VAR &&
               fw.header.method_id == MLX5_IB_METHOD_VAR_OBJ_ALLOC) {
      fw.Find(MLX5_IB_ATTR_VAR_OBJ_ALLOC_HANDLE)->data = next_handle++;
      fw.Output(MLX5_IB_ATTR_VAR_OBJ_ALLOC_PAGE_ID, uint32_t{1});
      fw.Output(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_LENGTH, uint32_t{8192});
      fw.Output(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_OFFSET, kEntry);
    }
    return 0L;
  };
  const auto alloc_uar = [&] { return f.Ioctl(UarAlloc(f.memory)); };
  const auto destroy = [&](uint16_t object, uint16_t method, uint16_t attr, uint32_t handle) {
    IoctlBuilder b(object, method, RDMA_DRIVER_MLX5);
    b.Handle(attr, handle);
    return f.Ioctl(b.Build());
  };
  CHECK(f.file->CheckMmap(kEntry, 4096, PROT_WRITE).error().errnum == EINVAL);
  REQUIRE(alloc_uar() == 0);  // handle 4
  CHECK(f.file->CheckMmap(kEntry, 4096, PROT_WRITE).ok());
  CHECK(f.file->CheckMmap(kEntry, 8192, PROT_WRITE).error().errnum == EINVAL);
  REQUIRE(destroy(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY,
                  MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, 4) == 0);
  CHECK(f.file->CheckMmap(kEntry, 4096, PROT_WRITE).error().errnum == EINVAL);
  CHECK(f.log.back().find("live UAR or VAR") != std::string::npos);

  // A VAR handed the same offset, with its own length.
  IoctlBuilder var(MLX5_IB_OBJECT_VAR, MLX5_IB_METHOD_VAR_OBJ_ALLOC, RDMA_DRIVER_MLX5);
  var.Handle(MLX5_IB_ATTR_VAR_OBJ_ALLOC_HANDLE, 0)
      .Pointer(MLX5_IB_ATTR_VAR_OBJ_ALLOC_PAGE_ID, f.memory.Alloc(4), 4)
      .Pointer(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_LENGTH, f.memory.Alloc(4), 4)
      .Pointer(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_OFFSET, f.memory.Alloc(8), 8);
  REQUIRE(f.Ioctl(var.Build()) == 0);  // handle 5
  CHECK(f.file->CheckMmap(kEntry, 8192, PROT_WRITE).ok());
  // A failed destroy leaves the object, and its entry, alive.
  f.host.on_ioctl = [](void*) { return -long{EBUSY}; };
  CHECK(destroy(MLX5_IB_OBJECT_VAR, MLX5_IB_METHOD_VAR_OBJ_DESTROY,
                MLX5_IB_ATTR_VAR_OBJ_DESTROY_HANDLE, 5) == -EBUSY);
  CHECK(f.file->CheckMmap(kEntry, 8192, PROT_WRITE).ok());
  f.host.on_ioctl = [](void*) { return 0L; };
  REQUIRE(destroy(MLX5_IB_OBJECT_VAR, MLX5_IB_METHOD_VAR_OBJ_DESTROY,
                  MLX5_IB_ATTR_VAR_OBJ_DESTROY_HANDLE, 5) == 0);
  CHECK(f.file->CheckMmap(kEntry, 8192, PROT_WRITE).error().errnum == EINVAL);
}

// Two threads of a traced program: one destroys UAR A (handle 4, offset X) while another
// allocates UAR B, which the kernel gives the handle and the offset A freed, and B's command
// settles first. The destroy that settles last must not take B out of the table (its quota,
// its mappable offset): it names A, which B's settling already forgot.
TEST_CASE("a destroy settled after a create reused its handle leaves the new object alone",
          "[engine][mmap][mlx5]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  const uint64_t kEntry = uint64_t{(9u << 8) | 1} << 12;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    if (fw.header.method_id == MLX5_IB_METHOD_UAR_OBJ_ALLOC) AnswerUarAlloc(fw, 4, 4096, kEntry);
    return 0L;  // the destroy: nothing to answer
  };
  const auto alloc_uar = [&] { return f.Ioctl(UarAlloc(f.memory)); };
  REQUIRE(alloc_uar() == 0);  // A
  IoctlBuilder destroy(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY, RDMA_DRIVER_MLX5);
  destroy.Handle(MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, 4);
  auto c = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(destroy.Build()));
  REQUIRE(c.ok());
  // The kernel destroys A; B's allocation takes handle 4 and offset X and settles first.
  REQUIRE(alloc_uar() == 0);  // B
  CHECK(f.engine.usage().live(MLX5_IB_OBJECT_UAR) == 1);
  auto image = (*c)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**c, 0, image, reinterpret_cast<uint64_t>(image.data()), f.memory,
                           f.fds) == 0);
  CHECK(f.file->live_objects() == 1);
  CHECK(f.engine.usage().live(MLX5_IB_OBJECT_UAR) == 1);
  CHECK(f.file->CheckMmap(kEntry, 4096, PROT_WRITE).ok());
  // B's own destroy takes it out.
  REQUIRE(f.Ioctl(destroy.Build()) == 0);
  CHECK(f.file->live_objects() == 0);
  CHECK(f.engine.usage().live(MLX5_IB_OBJECT_UAR) == 0);
  CHECK(f.file->CheckMmap(kEntry, 4096, PROT_WRITE).error().errnum == EINVAL);
}

// rdma-core's fallback from the GET_CONTEXT method (_execute_ioctl_fallback, on
// EPROTONOSUPPORT: a kernel or proxy without the method, or a mandatory attribute it does not
// know) sends the legacy GET_CONTEXT wrapped in INVOKE_WRITE. The kernel's handler
// (ib_uverbs_get_context) creates the async event fd and returns it in resp.async_fd; it must
// become the app's like ASYNC_EVENT.ALLOC's, or the EVENT_FD of every CQ rdma-core then
// creates is refused.
TEST_CASE("INVOKE_WRITE GET_CONTEXT: the async event fd it creates becomes the app's",
          "[engine]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  mlx5_ib_alloc_ucontext_req_v2 uctx{};
  uctx.total_num_bfregs = 8;
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_MLX5);
  const uint64_t core_out = f.memory.Alloc(sizeof(ib_uverbs_get_context_resp));
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_GET_CONTEXT, 8)
      .Inline(UVERBS_ATTR_CORE_IN, 0, sizeof(ib_uverbs_get_context))
      .Pointer(UVERBS_ATTR_CORE_OUT, core_out, sizeof(ib_uverbs_get_context_resp))
      .Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(uctx), sizeof(uctx), kOpt)
      .Pointer(UVERBS_ATTR_UHW_OUT, f.memory.Alloc(sizeof(mlx5_ib_alloc_ucontext_resp)),
               sizeof(mlx5_ib_alloc_ucontext_resp), kOpt);
  AnswerCoreOut(f, ib_uverbs_get_context_resp{66, 4});
  REQUIRE(f.Ioctl(b.Build()) == 0);
  const auto resp = f.memory.Get<ib_uverbs_get_context_resp>(core_out);
  CHECK(resp.num_comp_vectors == 4);
  REQUIRE(f.fds.fds().count(static_cast<int>(resp.async_fd)) == 1);  // an app fd, not 66
  const HostFile adopted = f.fds.fds().at(static_cast<int>(resp.async_fd));
  CHECK(adopted.host_fd == 66);
  CHECK(adopted.kind == FileKind::kAsyncEvent);
  CHECK(adopted.owner == f.file->id());
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);

  // The CQ rdma-core creates next names it as EVENT_FD; the kernel gets the host fd.
  int seen_event_fd = -1;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_event_fd = static_cast<int>(fw.Find(UVERBS_ATTR_CREATE_CQ_EVENT_FD)->data_s64);
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 12;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  IoctlBuilder cq = CqCreate(RDMA_DRIVER_MLX5, f.memory.Alloc(4));
  cq.Handle(UVERBS_ATTR_CREATE_CQ_EVENT_FD, resp.async_fd, kOpt);
  CHECK(f.Ioctl(cq.Build()) == 0);
  CHECK(seen_event_fd == 66);
}

// A legacy CREATE_QP wrapped in INVOKE_WRITE carries its type in CORE_IN, not in QP.CREATE
// attributes: a raw-packet QP (which the kernel grants on the issuer's CAP_NET_RAW) is refused
// there as on the write() path.
TEST_CASE("raw-packet QPs are refused through INVOKE_WRITE and write() alike", "[engine][policy]") {
  Fixture f;
  TrackPd(f, 7);
  TrackCq(f, 8);
  const int calls = f.host.calls;
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_RAW_PACKET, 7, 8), 9) == -EPERM);
  CHECK(f.host.calls == calls);
  REQUIRE_FALSE(f.log.empty());
  CHECK(f.log.back().find("raw-packet QPs need CAP_NET_RAW") != std::string::npos);
  ib_uverbs_ex_create_qp ex{};
  ex.pd_handle = 7;
  ex.send_cq_handle = ex.recv_cq_handle = 8;
  ex.qp_type = IB_UVERBS_QPT_UD;
  ex.create_flags = 1u << 10;  // IB_QP_CREATE_SOURCE_QPN
  CHECK(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP,
                            ex, sizeof(ib_uverbs_ex_create_qp_resp))) == -EPERM);
  CHECK(f.host.calls == calls);
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_RC, 7, 8), 9) == 0);
}

// REG_MR with start 0 and length 2^64-1 (implicit ODP: mlx5 create_user_odp_mr) registers the
// whole address space of the process that issues it. Only the app's own syscall may: the
// harness's forwarder leaves it to the app, and a sentry, whose process is the runtime, refuses
// it before the kernel sees it.
TEST_CASE("implicit ODP REG_MR (start 0) is issued by the app's own syscall only", "[engine]") {
  constexpr uint64_t kWholeSpace = UINT64_MAX;
  constexpr uint32_t kOdp = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  {
    Fixture f;  // sentry mode
    TrackPd(f, 7);
    const int calls = f.host.calls;
    uint64_t resp = 0;
    CHECK(f.Ioctl(RegMr(f.memory, 0, kWholeSpace, &resp, kOdp)) == -EFAULT);
    CHECK(f.host.calls == calls);
    // Without IB_ACCESS_ON_DEMAND the range goes to ib_umem_get, whose page-rounded end wraps.
    CHECK(f.Ioctl(RegMr(f.memory, 0, kWholeSpace, &resp)) == -EINVAL);
  }
  Fixture f(0);  // the harness: the forwarder, then the app's own syscall
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{7});
    return 0L;
  };
  uint64_t pd_resp = 0;
  REQUIRE(f.file->IoctlAsForwarder(f.memory, f.host, f.memory.PutBytes(AllocPd(f.memory, &pd_resp))) ==
          0);
  uint64_t mr_resp = 0;
  const uint64_t arg = f.memory.PutBytes(RegMr(f.memory, 0, kWholeSpace, &mr_resp, kOdp));
  CHECK_FALSE(f.file->IoctlAsForwarder(f.memory, f.host, arg).has_value());
  CHECK(f.host.calls == 1);
  auto c = f.file->BeginIoctl(f.memory, f.fds, arg);
  REQUIRE(c.ok());
  const uint64_t scratch = 0x600000000000;
  auto image = (*c)->image.Relocated(scratch);
  Forwarded fw(image.data());
  ib_uverbs_reg_mr seen;
  std::memcpy(&seen, image.data() + (fw.Find(UVERBS_ATTR_CORE_IN)->data - scratch), sizeof(seen));
  CHECK(seen.start == 0);
  CHECK(seen.length == kWholeSpace);
}

// The pinned budget counts what the kernel charges to pinned_vm: whole pages for a pinned MR
// (ib_umem_get, ib_umem_num_pages), nothing for an on-demand-paging one (ib_umem_odp_get pins
// no page), so an implicit ODP MR passes under any budget, as natively.
TEST_CASE("the pinned budget counts whole pages, and no ODP MR", "[engine]") {
  constexpr uint32_t kOdp = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  Fixture f(0, PinnedQuota(64 * 1024));  // the harness: the app's own syscall
  const uint64_t scratch = 0x600000000000;
  uint32_t next = 7;
  uint64_t resp = 0;
  // REG_MR(start, length, access) as the app's own syscall, answered with the next handle.
  const auto reg = [&](uint64_t start, uint64_t length, uint32_t access) {
    const auto request = RegMr(f.memory, start, length, &resp, access);
    auto c = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(request));
    if (!c) return -static_cast<long>(c.error().errnum);
    const ib_uverbs_reg_mr_resp answer{next++, 1, 2};
    REQUIRE(f.memory.Write(resp, std::as_bytes(std::span(&answer, 1))).ok());
    auto image = (*c)->image.Relocated(scratch);
    return f.file->Complete(**c, 0, image, scratch, f.memory, f.fds);
  };
  {
    auto c = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(AllocPd(f.memory, &resp)));
    REQUIRE(c.ok());
    const ib_uverbs_alloc_pd_resp answer{next++};
    REQUIRE(f.memory.Write(resp, std::as_bytes(std::span(&answer, 1))).ok());
    auto image = (*c)->image.Relocated(scratch);
    REQUIRE(f.file->Complete(**c, 0, image, scratch, f.memory, f.fds) == 0);
  }
  // 2 bytes across a page boundary: two pages.
  const uint64_t buf = f.memory.Alloc(8192);
  CHECK(reg(buf + 4095, 2, IB_UVERBS_ACCESS_LOCAL_WRITE) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 8192);
  // An explicit ODP MR of 1 MiB and an implicit one (the whole address space): nothing.
  const uint64_t big = f.memory.Alloc(1 << 20);
  CHECK(reg(big, 1 << 20, kOdp) == 0);
  CHECK(reg(0, UINT64_MAX, kOdp) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 8192);
  // The same 1 MiB pinned is over the 64 KiB budget.
  CHECK(reg(big, 1 << 20, IB_UVERBS_ACCESS_LOCAL_WRITE) == -ENOMEM);
  CHECK(f.file->live_objects() == 4);  // the PD and three MRs
}

// The pinned budget is compared without a sum that can wrap: 2^64-1 bytes asked on top of
// what is in use must not pass as a small number.
TEST_CASE("the pinned budget cannot be wrapped around", "[engine]") {
  Fixture f(0, PinnedQuota(64 * 1024));
  SandboxUsage& usage = f.engine.usage();
  REQUIRE(usage.ReservePinned(4096).ok());
  CHECK(usage.ReservePinned(UINT64_MAX).error().errnum == ENOMEM);
  CHECK(usage.Reserve(UVERBS_OBJECT_MR, UINT64_MAX - 4095).error().errnum == ENOMEM);
  CHECK(usage.pinned_bytes() == 4096);
  Fixture unlimited(0);
  REQUIRE(unlimited.engine.usage().ReservePinned(4096).ok());
  REQUIRE(unlimited.engine.usage().ReservePinned(UINT64_MAX).ok());
  CHECK(unlimited.engine.usage().pinned_bytes() == UINT64_MAX);  // saturated, not wrapped
}

// ib_uverbs_poll_cq writes 8 + ne * 48 bytes, whatever length the caller declared: in sentry
// mode into a bounce buffer of that length, so a larger ne is refused before the kernel.
TEST_CASE("POLL_CQ: ne must fit the response the caller declared", "[engine]") {
  Fixture f;
  TrackCq(f, 8);
  const int calls = f.host.calls;
  ib_uverbs_poll_cq cmd{};
  cmd.response = f.memory.Alloc(4096);
  cmd.cq_handle = 8;
  cmd.ne = 64;
  const auto short_write = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_POLL_CQ, cmd, {}, 2);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(short_write),
                      short_write.size()) == -EINVAL);
  CHECK(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_POLL_CQ, cmd,
                            sizeof(ib_uverbs_poll_cq_resp))) == -EINVAL);
  CHECK(f.host.calls == calls);
  REQUIRE_FALSE(f.log.empty());
  CHECK(f.log.back().find("ne 64 completions need 3080 response bytes") != std::string::npos);
  // rdma-core's own request (ibv_cmd_poll_cq: 8 + ne * 48 bytes) goes through.
  const auto fits = abi::testing::LegacyWrite(
      IB_USER_VERBS_CMD_POLL_CQ, cmd, {},
      static_cast<uint16_t>((sizeof(ib_uverbs_poll_cq_resp) + 64 * sizeof(ib_uverbs_wc)) / 4));
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(fits), fits.size()) ==
        static_cast<long>(fits.size()));
  CHECK(f.host.calls == calls + 1);
}

// REREG_MR without IB_MR_REREG_TRANS: the range is unused by the core, but a 6.12 mlx5 driver
// recreating an ODP MR registers it (mlx5_ib_rereg_user_mr: recreate). In sentry mode the app's
// numbers would be addresses of the runtime: they go as an empty range, through both paths.
TEST_CASE("REREG_MR without TRANS: no app address reaches a sentry's kernel", "[engine]") {
  Fixture f;
  TrackPd(f, 7);
  ib_uverbs_rereg_mr req{};
  req.mr_handle = 3;
  req.flags = abi::kMrReregAccess;
  req.start = 0x5555'0000'0000;  // not app memory at all
  req.length = uint64_t{1} << 30;
  req.hca_va = 0x5555'0000'0000;
  req.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  ib_uverbs_rereg_mr seen{};
  // MR 3 of PD 7 (REG_MR), then the rereg of its access only.
  f.host.on_ioctl = [&, first = true](void* arg) mutable {
    Forwarded fw(arg);
    if (first) {
      first = false;
      fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_reg_mr_resp{3, 0x111, 0x222});
      return 0L;
    }
    std::memcpy(&seen, reinterpret_cast<void*>(fw.Find(UVERBS_ATTR_CORE_IN)->data), sizeof(seen));
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_rereg_mr_resp{0x10, 0x20});
    return 0L;
  };
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(RegMr(f.memory, f.memory.Alloc(8192), 8192, &resp)) == 0);
  REQUIRE(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_REREG_MR, req,
                              sizeof(ib_uverbs_rereg_mr_resp))) == 0);
  CHECK(seen.start == 0);
  CHECK(seen.length == 0);
  CHECK(seen.mr_handle == 3);
  CHECK(seen.access_flags == req.access_flags);
  req.response = f.memory.Alloc(sizeof(ib_uverbs_rereg_mr_resp));
  const auto written = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_REREG_MR, req, {},
                                                 sizeof(ib_uverbs_rereg_mr_resp) / 4);
  f.host.on_write = [&](const void* b, size_t len) {
    std::memcpy(&seen, static_cast<const std::byte*>(b) + sizeof(ib_uverbs_cmd_hdr), sizeof(seen));
    return static_cast<long>(len);
  };
  seen = req;
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), written.size()) ==
        static_cast<long>(written.size()));
  CHECK(seen.start == 0);
  CHECK(seen.length == 0);
}

// The same under the harness (identity mode): a 6.12 mlx5 driver recreating an ODP MR would pin
// the range with no check (the harness's scratch region included) and no charge.
TEST_CASE("REREG_MR without TRANS: the harness's kernel gets an empty range too", "[engine]") {
  Fixture f(0);
  const uint64_t scratch = 0x600000000000;
  const auto run = [&](const std::vector<std::byte>& request, auto answer) {
    auto c = f.file->BeginIoctl(f.memory, f.fds, f.memory.PutBytes(request));
    REQUIRE(c.ok());
    auto image = (*c)->image.Relocated(scratch);
    Forwarded fw(image.data());
    const uint64_t out = fw.Find(UVERBS_ATTR_CORE_OUT)->data;  // the app's own buffer
    REQUIRE(f.memory.Write(out, std::as_bytes(std::span(&answer, 1))).ok());
    REQUIRE(f.file->Complete(**c, 0, image, scratch, f.memory, f.fds) == 0);
    return image;
  };
  uint64_t resp = 0;
  run(AllocPd(f.memory, &resp), ib_uverbs_alloc_pd_resp{7});
  run(RegMr(f.memory, f.memory.Alloc(8192), 8192, &resp), ib_uverbs_reg_mr_resp{3, 1, 2});
  ib_uverbs_rereg_mr req{};
  req.mr_handle = 3;
  req.flags = abi::kMrReregAccess;
  req.start = 0x5555'0000'0000;
  req.length = uint64_t{1} << 30;
  req.hca_va = 0x5555'0000'0000;
  req.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_ON_DEMAND;
  auto image = run(InvokeWrite(f.memory, IB_USER_VERBS_CMD_REREG_MR, req,
                               sizeof(ib_uverbs_rereg_mr_resp)),
                   ib_uverbs_rereg_mr_resp{1, 2});
  Forwarded fw(image.data());
  ib_uverbs_rereg_mr seen;
  std::memcpy(&seen, image.data() + (fw.Find(UVERBS_ATTR_CORE_IN)->data - scratch), sizeof(seen));
  CHECK(seen.start == 0);
  CHECK(seen.length == 0);
  CHECK(seen.mr_handle == 3);
  CHECK(seen.access_flags == req.access_flags);
  CHECK(f.engine.usage().pinned_bytes() == 8192);  // the MR's own charge, nothing more
}

// mlx5 copies some driver responses with ib_copy_to_udata, which ignores the caller's length
// (mlx5_ib_create_cq: the cqn). A 0-byte UHW_OUT still gets a bounce those bytes fit in; the
// kernel sees the app's length, and the app gets back none. (The unit tests' ASan run catches
// a write past the image.)
TEST_CASE("a short UHW_OUT gets a bounce the driver's unchecked copy fits in", "[engine]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  const uint64_t app_out = f.memory.Alloc(16);
  uint16_t kernel_len = 0xffff;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    ib_uverbs_attr* out = fw.Find(UVERBS_ATTR_UHW_OUT);
    REQUIRE(out != nullptr);
    kernel_len = out->len;
    const uint64_t cqn = 0x4242;  // what mlx5_ib_create_cq copies, and a little more
    std::memcpy(reinterpret_cast<void*>(out->data), &cqn, sizeof(cqn));
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 12;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  std::vector<std::byte> uhw_in(512);  // so that the image ends where its bounce would
  IoctlBuilder cq = CqCreate(RDMA_DRIVER_MLX5, f.memory.Alloc(4));
  cq.Pointer(UVERBS_ATTR_UHW_IN, f.memory.PutBytes(uhw_in), 512, kOpt)
      .Pointer(UVERBS_ATTR_UHW_OUT, app_out, 0, kOpt);
  CHECK(f.Ioctl(cq.Build()) == 0);
  CHECK(kernel_len == 0);
  CHECK(f.memory.Get<uint64_t>(app_out) == 0);  // nothing past the app's 0 bytes came back
}

// ib_copy_to_udata and uverbs_copy_to write only the kernel's own struct: the rest of a longer
// app buffer stays as it was natively, so the bounce must not bring zeros back over it.
TEST_CASE("sentry mode: bytes of an output past what the kernel wrote stay the app's", "[engine]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  std::vector<std::byte> pattern(64, std::byte{0xab});
  const uint64_t app_out = f.memory.PutBytes(pattern);
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    ib_uverbs_attr* out = fw.Find(UVERBS_ATTR_UHW_OUT);
    REQUIRE(out != nullptr);
    REQUIRE(out->len == 64);
    const uint64_t cqn = 0x4242;  // a driver response of 8 bytes
    std::memcpy(reinterpret_cast<void*>(out->data), &cqn, sizeof(cqn));
    out->flags |= UVERBS_ATTR_F_VALID_OUTPUT;  // ib_uverbs_run_method, after the handler
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 12;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  IoctlBuilder cq = CqCreate(RDMA_DRIVER_MLX5, f.memory.Alloc(4));
  cq.Pointer(UVERBS_ATTR_UHW_OUT, app_out, 64, kOpt);
  REQUIRE(f.Ioctl(cq.Build()) == 0);
  CHECK(f.memory.Get<uint64_t>(app_out) == 0x4242);
  for (size_t i = 8; i < 64; ++i) {
    INFO("byte " << i);
    CHECK(f.memory.Get<uint8_t>(app_out + i) == 0xab);
  }
}

// OPEN_XRCD keys the domain by the file's inode across the host (find_xrcd): the app's device
// and event files share their inodes with every sandbox, so a domain on one is refused.
TEST_CASE("OPEN_XRCD on an RDMA file is refused, on the app's own file forwarded", "[engine]") {
  Fixture f;
  f.fds.Add(5, {77, FileKind::kUverbs, f.file->id()});
  f.fds.Add(6, {88, FileKind::kOther, 0});
  ib_uverbs_open_xrcd req{};
  req.fd = 5;
  req.oflags = 0x40;  // O_CREAT
  CHECK(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_OPEN_XRCD, req,
                            sizeof(ib_uverbs_open_xrcd_resp))) == -EPERM);
  CHECK(f.host.calls == 0);
  int seen_fd = -1;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    ib_uverbs_open_xrcd r;
    std::memcpy(&r, reinterpret_cast<void*>(fw.Find(UVERBS_ATTR_CORE_IN)->data), sizeof(r));
    seen_fd = static_cast<int>(r.fd);
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_open_xrcd_resp{4});
    return 0L;
  };
  req.fd = 6;
  CHECK(f.Ioctl(InvokeWrite(f.memory, IB_USER_VERBS_CMD_OPEN_XRCD, req,
                            sizeof(ib_uverbs_open_xrcd_resp))) == 0);
  CHECK(seen_fd == 88);
}

TEST_CASE("rxe: queue mmap cookies from create responses are mappable once", "[engine][mmap]") {
  Fixture f;
  const uint64_t uhw = f.memory.Alloc(sizeof(rxe_create_cq_resp));
  const uint64_t resp = f.memory.Alloc(4);
  IoctlBuilder b = CqCreate(RDMA_DRIVER_RXE, resp);
  b.Pointer(UVERBS_ATTR_UHW_OUT, uhw, sizeof(rxe_create_cq_resp), kOpt);
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 2;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    rxe_create_cq_resp r{};
    r.mi.offset = 0x89000;
    r.mi.size = 69632;
    fw.Output(UVERBS_ATTR_UHW_OUT, r);
    return 0L;
  };
  CHECK(f.file->CheckMmap(0x89000, 69632, PROT_READ | PROT_WRITE).error().errnum == EINVAL);
  REQUIRE(f.Ioctl(b.Build()) == 0);
  CHECK(f.memory.Get<rxe_create_cq_resp>(uhw).mi.offset == 0x89000);
  CHECK(f.file->CheckMmap(0x89000, 69632, PROT_READ | PROT_WRITE).ok());
  CHECK(f.file->CheckMmap(0x89000, 69633, PROT_READ).error().errnum == EINVAL);
  CHECK(f.file->CheckMmap(0x8a000, 4096, PROT_READ).error().errnum == EINVAL);
  CHECK(f.file->Mapped(0x89000).ok());
  CHECK(f.file->CheckMmap(0x89000, 69632, PROT_READ).error().errnum == EINVAL);
  CHECK(f.file->Mapped(0x89000).error().errnum == EINVAL);  // committed already
  CHECK(f.file->Mapped(0x8a000).error().errnum == EINVAL);  // never checked
}

// rxe's send doorbell as post_send_db() writes it: a POST_SEND with no work requests.
ib_uverbs_post_send DoorbellRequest(uint64_t response, uint32_t qp_handle) {
  ib_uverbs_post_send p{};
  p.response = response;
  p.qp_handle = qp_handle;
  p.wqe_size = sizeof(ib_uverbs_send_wr);
  return p;
}
std::vector<std::byte> DoorbellWrite(uint64_t response, uint32_t qp_handle) {
  return abi::testing::LegacyWrite(IB_USER_VERBS_CMD_POST_SEND,
                                   DoorbellRequest(response, qp_handle), {}, 1);
}

TEST_CASE("legacy write: POST_SEND doorbell and a response through a bounce buffer",
          "[engine][write]") {
  Fixture f;
  TrackPd(f, 7);
  TrackCq(f, 12);
  TrackRcQp(f, 3, 7, 12);
  f.trace.clear();
  const int calls = f.host.calls;
  const uint64_t resp = f.memory.Alloc(4);
  auto buf = DoorbellWrite(resp, 3);
  const uint64_t at = f.memory.PutBytes(buf);
  f.host.on_write = [&](const void* w, size_t len) {
    ib_uverbs_post_send seen;
    std::memcpy(&seen, static_cast<const std::byte*>(w) + sizeof(ib_uverbs_cmd_hdr), sizeof(seen));
    CHECK(seen.response != resp);  // a bounce buffer, not the app's pointer
    const uint32_t bad_wr = 0;
    std::memcpy(reinterpret_cast<void*>(seen.response), &bad_wr, 4);
    return static_cast<long>(len);
  };
  CHECK(f.file->Write(f.memory, f.fds, f.host, at, buf.size()) == static_cast<long>(buf.size()));
  REQUIRE(f.trace.size() == 1);
  CHECK(f.trace[0] == "write(uverbs0, POST_SEND{qp_handle=3 wr_count=0 sge_count=0 wqe_size=56}) = 32 {bad_wr=0}");
  // A malformed write is refused and never reaches the device.
  buf[4] = std::byte{3};
  const uint64_t bad = f.memory.PutBytes(buf);
  CHECK(f.file->Write(f.memory, f.fds, f.host, bad, buf.size()) == -EINVAL);
  CHECK(f.host.calls == calls + 1);
  CHECK(f.engine.counters().refused_decode == 1);
  // So is a doorbell for a QP this file never created (ENOENT, as the kernel's lookup).
  buf = DoorbellWrite(resp, 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(buf), buf.size()) == -ENOENT);
  CHECK(f.host.calls == calls + 1);
  CHECK(f.engine.counters().refused_state == 1);
}

// ib_uverbs_write() answers a count shorter than the header with EINVAL before it reads the
// buffer, and no count past the longest extended command can match its header (verify_hdr()).
TEST_CASE("write: a count no command can have is EINVAL before the buffer is read",
          "[engine][write]") {
  Fixture f;
  const int calls = f.host.calls;
  constexpr uint64_t kUnmapped = 0x10;  // not app memory: reading it would be EFAULT
  CHECK(f.file->Write(f.memory, f.fds, f.host, kUnmapped, 4) == -EINVAL);
  CHECK(f.file->Write(f.memory, f.fds, f.host, kUnmapped, 0) == -EINVAL);
  constexpr uint64_t kLongest = 8 + 16 + 2 * 65535 * 8;
  CHECK(f.file->Write(f.memory, f.fds, f.host, kUnmapped, kLongest + 1) == -EINVAL);
  CHECK(f.file->Write(f.memory, f.fds, f.host, kUnmapped, 64 * 1024 + 8) == -EFAULT);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.counters().refused_decode == 4);
}

// create_qp() (uverbs_cmd.c) reads an XRC target QP's pd_handle as an XRCD handle; the proxy
// looks it up as one, and as a PD for every other QP type -- through write(), INVOKE_WRITE and
// (where the XRCD has its own attribute) QP.CREATE.
TEST_CASE("an XRC target QP is created over a tracked XRCD, its pd_handle looked up as one",
          "[engine][xrc]") {
  Fixture f;
  TrackPd(f, 7);
  TrackCq(f, 12);
  TrackXrcd(f, 9);
  const size_t objects = f.file->live_objects();
  int calls = f.host.calls;
  // CQ and SRQ handles of an XRC target QP are not read by the kernel: junk passes.
  auto tgt = CreateQpReq(IB_UVERBS_QPT_XRC_TGT, 9, 0x77);
  tgt.srq_handle = 0x78;
  tgt.is_srq = 1;
  REQUIRE(CreateQp(f, tgt, 20) == 0);
  CHECK(f.host.calls == ++calls);
  CHECK(f.file->live_objects() == objects + 1);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_QP) == 1);

  // The kernel answers EINVAL for any XRCD lookup that fails: a PD, or nothing at all.
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_XRC_TGT, 7, 12), 21) == -EINVAL);
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_XRC_TGT, 55, 12), 21) == -EINVAL);
  // Every other QP type names a PD: the XRCD is the wrong type (EINVAL), an unknown handle is
  // ENOENT, and so is an unknown CQ.
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_RC, 9, 12), 21) == -EINVAL);
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_RC, 55, 12), 21) == -ENOENT);
  CHECK(CreateQp(f, CreateQpReq(IB_UVERBS_QPT_XRC_INI, 7, 56), 21) == -ENOENT);
  CHECK(f.host.calls == calls);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("send_cq_handle") != std::string::npos);
  CHECK(f.file->live_objects() == objects + 1);

  // EX_CREATE_QP through INVOKE_WRITE: the same rule.
  ib_uverbs_ex_create_qp ex{};
  ex.pd_handle = 9;
  ex.qp_type = IB_UVERBS_QPT_XRC_TGT;
  ib_uverbs_ex_create_qp_resp ex_resp{};
  ex_resp.base.qp_handle = 22;
  AnswerCoreOut(f, ex_resp);
  const uint32_t ex_cmd = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP;
  REQUIRE(f.Ioctl(InvokeWrite(f.memory, ex_cmd, ex, sizeof(ex_resp))) == 0);
  CHECK(f.host.calls == ++calls);
  ex.pd_handle = 7;
  CHECK(f.Ioctl(InvokeWrite(f.memory, ex_cmd, ex, sizeof(ex_resp))) == -EINVAL);
  CHECK(f.host.calls == calls);

  // A legacy write() CREATE_QP.
  auto legacy = CreateQpReq(IB_UVERBS_QPT_XRC_TGT, 9, 0);
  legacy.response = f.memory.Alloc(sizeof(ib_uverbs_create_qp_resp));
  f.host.on_write = [&](const void* w, size_t len) {
    ib_uverbs_create_qp seen;
    std::memcpy(&seen, static_cast<const std::byte*>(w) + sizeof(ib_uverbs_cmd_hdr),
                sizeof(seen));
    ib_uverbs_create_qp_resp r{};
    r.qp_handle = 23;
    std::memcpy(reinterpret_cast<void*>(seen.response), &r, sizeof(r));
    return static_cast<long>(len);
  };
  auto buf = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_CREATE_QP, legacy, {},
                                       sizeof(ib_uverbs_create_qp_resp) / 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(buf), buf.size()) ==
        static_cast<long>(buf.size()));
  CHECK(f.host.calls == ++calls);
  legacy.pd_handle = 7;
  buf = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_CREATE_QP, legacy, {},
                                  sizeof(ib_uverbs_create_qp_resp) / 4);
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(buf), buf.size()) == -EINVAL);
  CHECK(f.host.calls == calls);
  CHECK(f.file->live_objects() == objects + 3);

  // QP.CREATE carries the XRCD in its own attribute, an IDR of type XRCD.
  auto qp_create = [&](uint32_t xrcd) {
    IoctlBuilder b(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, RDMA_DRIVER_RXE);
    b.Handle(UVERBS_ATTR_CREATE_QP_HANDLE, 0)
        .Handle(UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, xrcd, kOpt)
        .Inline(UVERBS_ATTR_CREATE_QP_USER_HANDLE, 0, 8)
        .Pointer(UVERBS_ATTR_CREATE_QP_CAP, f.memory.Put(ib_uverbs_qp_cap{}),
                 sizeof(ib_uverbs_qp_cap))
        .Inline(UVERBS_ATTR_CREATE_QP_TYPE, IB_UVERBS_QPT_XRC_TGT, 8)
        .Pointer(UVERBS_ATTR_CREATE_QP_RESP_CAP, f.memory.Alloc(sizeof(ib_uverbs_qp_cap)),
                 sizeof(ib_uverbs_qp_cap))
        .Pointer(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, f.memory.Alloc(4), 4);
    return b.Build();
  };
  f.host.on_ioctl = [](void* arg) {
    Forwarded(arg).Find(UVERBS_ATTR_CREATE_QP_HANDLE)->data = 24;
    return 0L;
  };
  CHECK(f.Ioctl(qp_create(9)) == 0);
  CHECK(f.host.calls == ++calls);
  CHECK(f.Ioctl(qp_create(7)) == -EINVAL);
  CHECK(f.host.calls == calls);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_QP) == 4);
}

// Linux 6.12 appends `struct mlx5_ib_uapi_reg reg_c0` to struct mlx5_ib_query_device_resp
// (104 -> 112 bytes); the installed 6.1 headers, and so the schema's layout, end before it.
// mlx5_ib_query_device() writes as much as the caller's buffer holds. The proxy sizes driver
// responses by the caller's buffer, never by the schema's struct: a newer rdma-core gets all
// 112 bytes back, and the trace prints the fields the schema names.
TEST_CASE("mlx5 EX_QUERY_DEVICE: a 6.12 driver response longer than the installed struct",
          "[engine][mlx5]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  constexpr size_t k612Size = 112;  // sizeof(struct mlx5_ib_query_device_resp) in 6.12
  static_assert(sizeof(mlx5_ib_query_device_resp) < k612Size);
  std::array<std::byte, k612Size> kernel{};
  mlx5_ib_query_device_resp head{};
  head.response_length = k612Size;
  head.flags = MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_COMP;
  std::memcpy(kernel.data(), &head, sizeof(head));
  const uint32_t reg_c0[2] = {0x12345678, 0xffff0000};  // value, mask
  std::memcpy(kernel.data() + sizeof(head), reg_c0, sizeof(reg_c0));
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    ib_uverbs_attr* uhw = fw.Find(UVERBS_ATTR_UHW_OUT);
    REQUIRE(uhw != nullptr);
    REQUIRE(uhw->len == k612Size);  // the app's length reaches the kernel
    std::memcpy(reinterpret_cast<void*>(uhw->data), kernel.data(), kernel.size());
    uhw->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
    fw.Output(UVERBS_ATTR_CORE_OUT,
              std::array<std::byte, sizeof(ib_uverbs_ex_query_device_resp)>{});
    return 0L;
  };
  const uint64_t uhw_out = f.memory.Alloc(k612Size);
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_MLX5);
  b.Inline(UVERBS_ATTR_WRITE_CMD,
           IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 8)
      .Inline(UVERBS_ATTR_CORE_IN, 0, sizeof(ib_uverbs_ex_query_device))
      .Pointer(UVERBS_ATTR_CORE_OUT, f.memory.Alloc(sizeof(ib_uverbs_ex_query_device_resp)),
               sizeof(ib_uverbs_ex_query_device_resp))
      .Pointer(UVERBS_ATTR_UHW_OUT, uhw_out, k612Size, kOpt);
  REQUIRE(f.Ioctl(b.Build()) == 0);
  const auto app = f.memory.Get<std::array<std::byte, k612Size>>(uhw_out);
  CHECK(std::memcmp(app.data(), kernel.data(), k612Size) == 0);  // reg_c0 included
  REQUIRE(f.trace.size() == 1);
  CHECK(f.trace[0].find("uhw={comp_mask=0x0 response_length=112 flags=0x1}") !=
        std::string::npos);
}

// mlx5 pins a queue buffer for the length it computes in the kernel (create_cq_user: entries
// rounded up from the core cqe, times cqe_size) and the doorbell's whole page
// (mlx5_ib_db_map_user). A sentry must get the embedder's word for all of it: asking for one
// byte let an app whose buffer ends its memory have the host pin, and the NIC write, whatever
// the runtime mapped next.
TEST_CASE("sentry mode: mlx5 queue buffers are checked for the whole length the driver pins",
          "[engine][mlx5]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  uint64_t seen_buf = 0, seen_db = 0;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    const auto ucmd = fw.Input<mlx5_ib_create_cq>(UVERBS_ATTR_UHW_IN);
    seen_buf = ucmd.buf_addr;
    seen_db = ucmd.db_addr;
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 12;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  const uint64_t db_page = f.memory.Alloc(4096);
  const auto create = [&](uint64_t buf, uint64_t db) {
    mlx5_ib_create_cq ucmd{};
    ucmd.buf_addr = buf;
    ucmd.db_addr = db;
    ucmd.cqe_size = 64;
    IoctlBuilder cq = CqCreate(RDMA_DRIVER_MLX5, f.memory.Alloc(4));  // 16 entries: 32 CQEs
    cq.Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(ucmd), sizeof(ucmd), kOpt);
    return f.Ioctl(cq.Build());
  };
  const uint64_t whole = f.memory.Alloc(32 * 64);
  REQUIRE(create(whole, db_page + 64) == 0);
  CHECK(seen_buf == whole + kMirror);
  CHECK(seen_db == db_page + 64 + kMirror);

  const int calls = f.host.calls;
  const uint64_t short_buf = f.memory.Alloc(32 * 64 - 1);  // one byte short of 32 CQEs
  CHECK(create(short_buf, db_page + 64) == -EFAULT);
  CHECK(f.log.back().find("buf_addr") != std::string::npos);
  CHECK(f.log.back().find("+2048 bytes the driver pins") != std::string::npos);
  const uint64_t db_alone = f.memory.Alloc(8);  // the rest of its page is not app memory
  CHECK(create(whole, db_alone) == -EFAULT);
  CHECK(f.log.back().find("db_addr") != std::string::npos);
  CHECK(f.host.calls == calls);
  CHECK(f.file->live_objects() == 1);
}

// Queue buffers are pinned like MRs (ib_umem_get charges the pinning process's memlock): the
// sandbox's pinned budget counts them with their CQ, under the harness (identity) and in sentry
// mode alike; RESIZE_CQ moves the CQ's charge to its new buffer, destroying it releases it.
std::vector<std::byte> Mlx5CreateCq(FakeAppMemory& mem, uint64_t buf, uint64_t db) {
  mlx5_ib_create_cq ucmd{};
  ucmd.buf_addr = buf;
  ucmd.db_addr = db;
  ucmd.cqe_size = 64;
  IoctlBuilder cq = CqCreate(RDMA_DRIVER_MLX5, mem.Alloc(4));  // 32 CQEs: 2 KiB
  cq.Pointer(UVERBS_ATTR_UHW_IN, mem.Put(ucmd), sizeof(ucmd), kOpt);
  return cq.Build();
}

// The kernel's answers to mlx5 CQ.CREATE (the handle `next_handle`, counting up; 32 entries)
// and to INVOKE_WRITE(RESIZE_CQ) (128 entries).
void AnswerCqCreateAndResize(Fixture& f, uint32_t& next_handle) {
  f.host.on_ioctl = [&next_handle](void* arg) {
    Forwarded fw(arg);
    if (fw.header.object_id == UVERBS_OBJECT_CQ) {  // CQ.CREATE
      fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = next_handle++;
      fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    } else {  // INVOKE_WRITE(RESIZE_CQ)
      fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_resize_cq_resp{127, {}});
    }
    return 0L;
  };
}

TEST_CASE("mlx5 queue buffers the app pins itself are still vouched for by the embedder",
          "[engine][mlx5]") {
  // The harness (identity): the app's own syscall pins, but a range the embedder refuses (not
  // mapped in the app, or the harness's scratch region) never reaches the kernel.
  Fixture f(0, PinnedQuota(1 << 20), RDMA_DRIVER_MLX5);
  const uint64_t db = f.memory.Alloc(4096);
  auto good = f.file->BeginIoctl(
      f.memory, f.fds, f.memory.PutBytes(Mlx5CreateCq(f.memory, f.memory.Alloc(2048), db)));
  CHECK(good.ok());
  const uint64_t short_buf = f.memory.Alloc(2047);  // one byte short of 32 CQEs
  auto bad = f.file->BeginIoctl(
      f.memory, f.fds, f.memory.PutBytes(Mlx5CreateCq(f.memory, short_buf, db)));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().errnum == EFAULT);
  CHECK(bad.error().reason.find("+2048 bytes the driver pins") != std::string::npos);
}

TEST_CASE("mlx5 queue buffers count against the pinned budget", "[engine][mlx5]") {
  {  // The harness (identity): the app's own syscall pins; the budget counts it all the same.
    Fixture f(0, PinnedQuota(8192), RDMA_DRIVER_MLX5);
    const uint64_t arg =
        f.memory.PutBytes(Mlx5CreateCq(f.memory, f.memory.Alloc(2048), f.memory.Alloc(4096)));
    auto c = f.file->BeginIoctl(f.memory, f.fds, arg);
    REQUIRE(c.ok());
    // 2 KiB of CQEs: one whole page pinned; and the doorbell record's page.
    CHECK(f.engine.usage().pinned_bytes() == 8192);
    auto image = (*c)->image.Relocated(0x600000000000);
    CHECK(f.file->Complete(**c, -EINVAL, image, 0x600000000000, f.memory, f.fds) == -EINVAL);
    CHECK(f.engine.usage().pinned_bytes() == 0);  // a failed creation gives it back
  }
  {
    // ib_umem_get charges whole pages: a 2 KiB buffer is a page, 8 KiB two; the doorbell
    // page the CQs share is pinned once (mlx5_ib_db_map_user), with the first.
    Fixture f(kMirror, PinnedQuota(20480), RDMA_DRIVER_MLX5);
    uint32_t next_handle = 12;
    AnswerCqCreateAndResize(f, next_handle);
    const uint64_t db_page = f.memory.Alloc(4096);
    const uint64_t buf = f.memory.Alloc(8192);
    const auto create = [&]() { return f.Ioctl(Mlx5CreateCq(f.memory, buf, db_page)); };
    REQUIRE(create() == 0);
    CHECK(f.engine.usage().pinned_bytes() == 8192);
    REQUIRE(create() == 0);
    CHECK(f.engine.usage().pinned_bytes() == 12288);
    // INVOKE_WRITE(RESIZE_CQ) of CQ `handle` to `cqe` entries of `cqe_size` bytes at buf.
    const auto resize_cq = [&](uint32_t handle, uint32_t cqe, uint16_t cqe_size) {
      ib_uverbs_resize_cq resize{};
      resize.cq_handle = handle;
      resize.cqe = cqe;
      mlx5_ib_resize_cq rcmd{};
      rcmd.buf_addr = buf;
      rcmd.cqe_size = cqe_size;
      return f.Ioctl(InvokeWriteMlx5(f.memory, IB_USER_VERBS_CMD_RESIZE_CQ, resize,
                                     sizeof(ib_uverbs_resize_cq_resp), rcmd));
    };
    // The first CQ to 127 entries: 128 CQEs, 8 KiB, in place of its page.
    REQUIRE(resize_cq(12, 127, 64) == 0);
    CHECK(f.engine.usage().pinned_bytes() == 16384);
    // The second CQ to the 32 entries it has: mlx5_ib_resize_cq returns before it reads the
    // request, so whatever cqe_size says, its page stays what it holds.
    REQUIRE(resize_cq(13, 31, 128) == 0);
    CHECK(f.engine.usage().pinned_bytes() == 16384);
    // A third CQ fills the 20 KiB budget; a fourth is ENOMEM, not forwarded.
    REQUIRE(create() == 0);
    CHECK(f.engine.usage().pinned_bytes() == 20480);
    const int calls = f.host.calls;
    CHECK(create() == -ENOMEM);
    CHECK(f.host.calls == calls);
    // Destroying the resized CQ gives back its 4 KiB.
    f.host.on_ioctl = [](void*) { return 0L; };
    const auto destroy = [&f](uint32_t handle) {
      IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, RDMA_DRIVER_MLX5);
      b.Handle(UVERBS_ATTR_DESTROY_CQ_HANDLE, handle)
          .Pointer(UVERBS_ATTR_DESTROY_CQ_RESP, f.memory.Alloc(8), 8);
      return f.Ioctl(b.Build());
    };
    REQUIRE(destroy(12) == 0);
    CHECK(f.engine.usage().pinned_bytes() == 12288);
    // The doorbell page goes with the last CQ that holds a record in it.
    REQUIRE(destroy(13) == 0);
    CHECK(f.engine.usage().pinned_bytes() == 8192);
    REQUIRE(destroy(14) == 0);
    CHECK(f.engine.usage().pinned_bytes() == 0);
  }
}

// Closing the file gives back its doorbell pages with its queues, as the kernel's context
// teardown unpins them; a creation the kernel refuses holds none.
TEST_CASE("doorbell pages are given back on failure and on close", "[engine][mlx5]") {
  Fixture f(kMirror, PinnedQuota(1 << 20), RDMA_DRIVER_MLX5);
  const uint64_t db_page = f.memory.Alloc(4096);
  const uint64_t buf = f.memory.Alloc(2048);
  f.host.on_ioctl = [](void*) { return -12L; };  // ENOMEM from the device
  CHECK(f.Ioctl(Mlx5CreateCq(f.memory, buf, db_page)) == -ENOMEM);
  CHECK(f.engine.usage().pinned_bytes() == 0);
  f.host.on_ioctl = [](void* arg) {
    Forwarded fw(arg);
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 3;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  REQUIRE(f.Ioctl(Mlx5CreateCq(f.memory, buf, db_page)) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 8192);
  f.file.reset();
  CHECK(f.engine.usage().pinned_bytes() == 0);
}

// App memory whose host view moves by `shift`, as a runtime's mirror of a page does when the
// app unmaps it and maps new memory at the same address.
class ShiftedMirror final : public AppMemory {
 public:
  explicit ShiftedMirror(FakeAppMemory& base) : base_(base) {}
  uint64_t shift = 0;
  bool IdentityMapped() const override { return false; }
  Result<void> Read(uint64_t a, std::span<std::byte> out) override { return base_.Read(a, out); }
  Result<void> Write(uint64_t a, std::span<const std::byte> in) override {
    return base_.Write(a, in);
  }
  Result<uint64_t> HostAddress(uint64_t a, uint64_t length) override {
    auto host = base_.HostAddress(a, length);
    if (!host) return host;
    return *host + shift;
  }

 private:
  FakeAppMemory& base_;
};

// mlx5_ib_db_map_user looks a context's doorbell pages up by the address it is given: in a
// sentry, the host's. The same app page backed by other host memory is a second pin.
TEST_CASE("sentry mode: doorbell pages are counted by the host page the kernel pins",
          "[engine][mlx5]") {
  Fixture f(kMirror, PinnedQuota(1 << 20), RDMA_DRIVER_MLX5);
  ShiftedMirror memory(f.memory);
  uint32_t next_handle = 3;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = next_handle++;
    fw.Output(UVERBS_ATTR_CREATE_CQ_RESP_CQE, uint32_t{31});
    return 0L;
  };
  const uint64_t db_page = f.memory.Alloc(4096);
  const uint64_t buf = f.memory.Alloc(2048);
  const auto create = [&] {
    return f.file->Ioctl(memory, f.fds, f.host,
                         f.memory.PutBytes(Mlx5CreateCq(f.memory, buf, db_page)));
  };
  REQUIRE(create() == 0);
  REQUIRE(create() == 0);
  CHECK(f.engine.usage().pinned_bytes() == 2 * 4096 + 4096);  // two CQ pages, one doorbell
  memory.shift = 1 << 20;
  REQUIRE(create() == 0);
  CHECK(f.engine.usage().pinned_bytes() == 3 * 4096 + 2 * 4096);
  f.file.reset();
  CHECK(f.engine.usage().pinned_bytes() == 0);
}

// mlx5's EX_CREATE_FLOW driver data ends in counters_data entries whose pointer the kernel
// copies ncounters 8-byte descriptors from (flow_counters_set_data). Under a policy that allows
// flow steering, a sentry hands the kernel a copy in the image, never the app's address.
TEST_CASE("sentry mode: mlx5 flow counters data is copied, not passed through", "[engine][mlx5]") {
  PolicyConfig policy;
  policy.allow.insert("IB_USER_VERBS_EX_CMD_CREATE_FLOW");
  Fixture f(kMirror, policy, RDMA_DRIVER_MLX5);
  TrackPd(f, 7);
  TrackCq(f, 8);
  TrackRcQp(f, 9, 7, 8);
  const mlx5_ib_flow_counters_desc descs[2] = {{1, 0}, {2, 1}};
  const uint64_t app_descs = f.memory.Put(descs);
  struct {
    uint32_t ncounters_data, reserved;  // mlx5_ib_create_flow, then its data[0]
    mlx5_ib_flow_counters_data data;
  } ucmd{};
  static_assert(sizeof(mlx5_ib_create_flow) == 8);
  ucmd.ncounters_data = 1;
  ucmd.data.counters_data = app_descs;
  ucmd.data.ncounters = 2;
  uint64_t seen_ptr = 0;
  std::array<mlx5_ib_flow_counters_desc, 2> seen{};
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_ptr = fw.Input<decltype(ucmd)>(UVERBS_ATTR_UHW_IN).data.counters_data;
    std::memcpy(seen.data(), reinterpret_cast<void*>(seen_ptr), sizeof(seen));
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_create_flow_resp{0, 5});
    return 0L;
  };
  ib_uverbs_create_flow flow{};
  flow.qp_handle = 9;
  constexpr uint32_t kCreateFlow =
      IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_FLOW;
  REQUIRE(f.Ioctl(InvokeWriteMlx5(f.memory, kCreateFlow, flow,
                                  sizeof(ib_uverbs_create_flow_resp), ucmd)) == 0);
  CHECK(seen_ptr != app_descs);
  CHECK(seen_ptr != app_descs + kMirror);  // a copy, not the mirror either
  CHECK(seen[0].description == 1);
  CHECK(seen[1].index == 1);
}

// An extended create written with no response buffer (ex_hdr.response 0, out_words 0: what
// verify_hdr accepts) still makes its object: the kernel's uverbs_response copies nothing and
// succeeds. It counts against the quotas until the file closes, though its handle is unknown.
// (Through INVOKE_WRITE a create without CORE_OUT is the kernel's ENOSPC.)
TEST_CASE("an extended create without a response still counts against the quota", "[engine]") {
  PolicyConfig policy;
  policy.quotas.qps = 1;
  Fixture f(kMirror, policy);
  TrackPd(f, 7);
  TrackCq(f, 8);
  f.host.on_write = [](const void*, size_t len) { return static_cast<long>(len); };
  ib_uverbs_ex_create_qp ex{};
  ex.pd_handle = 7;
  ex.send_cq_handle = ex.recv_cq_handle = 8;
  ex.qp_type = IB_UVERBS_QPT_RC;
  ex.max_send_wr = ex.max_recv_wr = ex.max_send_sge = ex.max_recv_sge = 1;
  const auto written = abi::testing::ExWrite(IB_USER_VERBS_EX_CMD_CREATE_QP, ex, 0, 0);
  const auto create = [&] {
    return f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), written.size());
  };
  REQUIRE(create() == static_cast<long>(written.size()));
  CHECK(f.engine.usage().live(UVERBS_OBJECT_QP) == 1);
  const int calls = f.host.calls;
  CHECK(create() == -EDQUOT);
  CHECK(f.host.calls == calls);
  f.file.reset();  // closing the file gives it back
  CHECK(f.engine.usage().live(UVERBS_OBJECT_QP) == 0);
}

// uapi_create_write() gives extended methods no req_size / resp_size: the kernel takes a short
// request zero-extended (uverbs_request) and truncates its answer to a short response
// (uverbs_response). The proxy forwards the request whole, as the kernel reads it, and the
// app's response length as it is -- through write() and INVOKE_WRITE alike.
TEST_CASE("extended commands: a short request reaches the kernel zero-extended, a short "
          "response stays short", "[engine][write]") {
  Fixture f;
  // write(): EX_CREATE_CQ without its last 8 bytes (flags, reserved), and room for just
  // cq_handle and cqe.
  struct ShortCreateCq {
    uint64_t user_handle;
    uint32_t cqe, comp_vector;
    int32_t comp_channel;
    uint32_t comp_mask;
  };
  static_assert(sizeof(ShortCreateCq) + 8 == sizeof(ib_uverbs_ex_create_cq));
  const ShortCreateCq short_cq{0x55, 16, 0, -1, 0};
  const uint64_t resp = f.memory.Alloc(8);
  const auto written = abi::testing::ExWrite(IB_USER_VERBS_EX_CMD_CREATE_CQ, short_cq, resp, 1);
  f.host.on_write = [&](const void* w, size_t len) {
    const auto* b = static_cast<const std::byte*>(w);
    CHECK(len == 8 + 16 + sizeof(ib_uverbs_ex_create_cq));
    ib_uverbs_cmd_hdr h;
    ib_uverbs_ex_cmd_hdr ex;
    ib_uverbs_ex_create_cq cmd;
    std::memcpy(&h, b, sizeof(h));
    std::memcpy(&ex, b + 8, sizeof(ex));
    std::memcpy(&cmd, b + 24, sizeof(cmd));
    CHECK(h.in_words == sizeof(ib_uverbs_ex_create_cq) / 8);
    CHECK(h.out_words == 1);
    CHECK(cmd.user_handle == 0x55);
    CHECK(cmd.cqe == 16);
    CHECK(cmd.comp_channel == -1);
    CHECK(cmd.flags == 0);
    CHECK(cmd.reserved == 0);
    const ib_uverbs_create_cq_resp answer{9, 16};
    std::memcpy(reinterpret_cast<void*>(ex.response), &answer, 8);
    return static_cast<long>(len);
  };
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(written), written.size()) ==
        static_cast<long>(written.size()));
  CHECK(f.memory.Get<uint32_t>(resp) == 9);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_CQ) == 1);

  // INVOKE_WRITE: the same 24-byte CORE_IN goes out as 32 bytes.
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    const ib_uverbs_attr* in = fw.Find(UVERBS_ATTR_CORE_IN);
    REQUIRE(in != nullptr);
    CHECK(in->len == sizeof(ib_uverbs_ex_create_cq));
    const auto cmd = fw.Input<ib_uverbs_ex_create_cq>(UVERBS_ATTR_CORE_IN);
    CHECK(cmd.user_handle == 0x55);
    CHECK(cmd.comp_channel == -1);
    CHECK(cmd.flags == 0);
    CHECK(fw.Find(UVERBS_ATTR_CORE_OUT)->len == 8);
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_create_cq_resp{10, 16});
    return 0L;
  };
  const uint32_t ex_create_cq = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_CQ;
  IoctlBuilder cq(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  cq.Inline(UVERBS_ATTR_WRITE_CMD, ex_create_cq, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, f.memory.Put(short_cq), sizeof(short_cq))
      .Pointer(UVERBS_ATTR_CORE_OUT, f.memory.Alloc(8), 8);
  CHECK(f.Ioctl(cq.Build()) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_CQ) == 2);
  // Only user_handle (inline): the zeroed comp_channel names fd 0, which is no completion
  // channel of the app -- the kernel's EBADF (ib_uverbs_lookup_comp_file), not forwarded.
  // INVOKE_WRITE of `command` with an inline CORE_IN and, unless out_len is 0, a CORE_OUT.
  const auto inline_invoke = [&](uint32_t command, uint64_t core_in, uint16_t in_len,
                                 uint16_t out_len) {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
    b.Inline(UVERBS_ATTR_WRITE_CMD, command, 8).Inline(UVERBS_ATTR_CORE_IN, core_in, in_len);
    if (out_len != 0) b.Pointer(UVERBS_ATTR_CORE_OUT, f.memory.Alloc(out_len), out_len);
    return f.Ioctl(b.Build());
  };
  int calls = f.host.calls;
  CHECK(inline_invoke(ex_create_cq, 0x66, 8, 8) == -EBADF);
  CHECK(f.host.calls == calls);
  // EX_MODIFY_CQ of CQ 9 with an inline 8-byte CORE_IN (cq_handle, attr_mask): its 16 bytes
  // go out as a pointer, since an inline attribute holds 8 at most (uverbs_attr_ptr_is_inline).
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    CHECK(fw.Find(UVERBS_ATTR_CORE_IN)->len == sizeof(ib_uverbs_ex_modify_cq));
    const auto cmd = fw.Input<ib_uverbs_ex_modify_cq>(UVERBS_ATTR_CORE_IN);
    CHECK(cmd.cq_handle == 9);
    CHECK(cmd.attr.cq_count == 0);
    return 0L;
  };
  CHECK(inline_invoke(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_MODIFY_CQ, 9, 8, 0) ==
        0);
  CHECK(f.host.calls == calls + 1);

  // EX_QUERY_DEVICE with a 4-byte CORE_IN stays inline, its other 4 bytes zeroed; the 32-byte
  // CORE_OUT reaches the kernel as 32 bytes.
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    const ib_uverbs_attr* in = fw.Find(UVERBS_ATTR_CORE_IN);
    REQUIRE(in != nullptr);
    CHECK(in->len == 8);
    CHECK(in->data == 0);
    CHECK(fw.Find(UVERBS_ATTR_CORE_OUT)->len == 32);
    return 0L;
  };
  const uint32_t ex_query = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
  // The bytes past the 4 of the request are not the request.
  CHECK(inline_invoke(ex_query, 0xdead000000000000, 4, 32) == 0);
  // A legacy command keeps verify_hdr's sizes: ENOSPC, not forwarded.
  calls = f.host.calls;
  CHECK(inline_invoke(IB_USER_VERBS_CMD_QUERY_DEVICE, 0, 8, 32) == -ENOSPC);
  CHECK(f.host.calls == calls);
}

// The same through the legacy write path: CREATE_QP's driver data sizes the QP buffer from
// rq_wqe_count << rq_wqe_shift plus 64 bytes per send WQE (set_user_buf_size).
TEST_CASE("sentry mode: an mlx5 QP buffer is checked for its receive and send queues",
          "[engine][mlx5]") {
  Fixture f(kMirror, {}, RDMA_DRIVER_MLX5);
  TrackPd(f, 7);
  TrackCq(f, 8);
  const uint64_t db_page = f.memory.Alloc(4096);
  uint64_t seen_buf = 0;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_buf = fw.Input<mlx5_ib_create_qp>(UVERBS_ATTR_UHW_IN).buf_addr;
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_create_qp_resp{9, 0x99});
    return 0L;
  };
  const auto create = [&](uint64_t buf, uint32_t rq_shift) {
    mlx5_ib_create_qp ucmd{};
    ucmd.buf_addr = buf;
    ucmd.db_addr = db_page;
    ucmd.rq_wqe_count = 64;
    ucmd.rq_wqe_shift = rq_shift;
    ucmd.sq_wqe_count = 128;
    return f.Ioctl(InvokeWriteMlx5(f.memory, IB_USER_VERBS_CMD_CREATE_QP,
                                   CreateQpReq(IB_UVERBS_QPT_RC, 7, 8),
                                   sizeof(ib_uverbs_create_qp_resp), ucmd));
  };
  constexpr size_t kBytes = 64 * 16 + 128 * 64;
  const uint64_t whole = f.memory.Alloc(kBytes);
  REQUIRE(create(whole, 4) == 0);
  CHECK(seen_buf == whole + kMirror);
  const int calls = f.host.calls;
  CHECK(create(f.memory.Alloc(kBytes - 64), 4) == -EFAULT);  // room for the RQ, not all the SQ
  CHECK(create(whole, 33) == -EINVAL);  // set_rq_size refuses the shift
  CHECK(f.log.back().find("overflow") != std::string::npos);
  CHECK(f.host.calls == calls);
}

// DEVX UMEM_REG pins [ADDR, ADDR + LEN) (devx_umem_get): under a policy that allows it, the
// whole range must be app memory the host can pin, not its first byte, and it counts against
// the pinned budget.
TEST_CASE("sentry mode: a DEVX UMEM is checked for its whole length", "[engine][mlx5]") {
  PolicyConfig policy;
  policy.devx = DevxMode::kAllow;
  policy.allow.insert("MLX5_IB_METHOD_DEVX_UMEM_REG");
  Fixture f(kMirror, policy, RDMA_DRIVER_MLX5);
  uint64_t seen_addr = 0;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_addr = fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR)->data;
    fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE)->data = 5;
    fw.Output(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, uint32_t{77});
    return 0L;
  };
  const uint64_t mem = f.memory.Alloc(4 * 4096);
  const auto reg = [&](uint64_t len) {
    IoctlBuilder b(MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_REG, RDMA_DRIVER_MLX5);
    b.Handle(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE, 0)
        .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR, mem, 8)
        .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_LEN, len, 8)
        .Pointer(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, f.memory.Alloc(4), 4);
    return f.Ioctl(b.Build());
  };
  const int calls = f.host.calls;
  CHECK(reg(5 * 4096) == -EFAULT);
  CHECK(f.log.back().find("+20480") != std::string::npos);
  CHECK(f.host.calls == calls);
  REQUIRE(reg(4 * 4096) == 0);
  CHECK(seen_addr == mem + kMirror);
  CHECK(f.engine.usage().pinned_bytes() == 4 * 4096);  // charged like an MR

  // With a dma-buf fd, ADDR is an offset into the dma-buf: nothing of the app's is asked for,
  // and the fd goes as mandatory, so a kernel that does not know it refuses rather than pin
  // the offset as a VA of the runtime's.
  f.fds.Add(30, HostFile{77, FileKind::kDmaBuf, 0});
  uint16_t seen_flags = 0;
  int64_t seen_fd = -1;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    seen_addr = fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR)->data;
    seen_flags = fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD)->flags;
    seen_fd = fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD)->data_s64;
    fw.Find(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE)->data = 6;
    fw.Output(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, uint32_t{78});
    return 0L;
  };
  IoctlBuilder dmabuf(MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_REG, RDMA_DRIVER_MLX5);
  dmabuf.Handle(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE, 0)
      .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR, 0x200000, 8)
      .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_LEN, 4096, 8)
      .Handle(MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD, 30, kOpt)
      .Pointer(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, f.memory.Alloc(4), 4);
  REQUIRE(f.Ioctl(dmabuf.Build()) == 0);
  CHECK(seen_addr == 0x200000);
  CHECK(seen_fd == 77);
  CHECK((seen_flags & UVERBS_ATTR_F_MANDATORY) != 0);
}

TEST_CASE("as the forwarder: context-free commands run on the forwarder's copy, the rest are "
          "left to the app without a trace",
          "[engine]") {
  Fixture f(0);  // the harness's app memory: the app's addresses only
  // ALLOC_PD: issued, answered through a bounce buffer, tracked, counted once.
  uint64_t pd_resp = 0;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    // The kernel writes the forwarder's bounce buffer, not the app's address.
    CHECK(fw.Find(UVERBS_ATTR_CORE_OUT)->data != pd_resp);
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{7});
    return 0L;
  };
  const uint64_t pd_arg = f.memory.PutBytes(AllocPd(f.memory, &pd_resp));
  auto pd = f.file->IoctlAsForwarder(f.memory, f.host, pd_arg);
  REQUIRE(pd.has_value());
  CHECK(*pd == 0);
  CHECK(f.host.calls == 1);
  CHECK(f.memory.Get<uint32_t>(pd_resp) == 7);  // the app reads the handle where it asked
  CHECK(f.file->live_objects() == 1);
  CHECK(f.engine.counters().commands == 1);
  CHECK(f.engine.counters().forwarded == 1);

  // REG_MR pins app memory: not issued, nothing counted, logged or reserved.
  const uint64_t buffer = f.memory.Alloc(8192);
  uint64_t mr_resp = 0;
  const uint64_t mr_arg = f.memory.PutBytes(RegMr(f.memory, buffer, 8192, &mr_resp));
  const size_t log_lines = f.log.size();
  CHECK_FALSE(f.file->IoctlAsForwarder(f.memory, f.host, mr_arg).has_value());
  CHECK(f.host.calls == 1);
  CHECK(f.log.size() == log_lines);
  CHECK(f.engine.counters().commands == 1);
  CHECK(f.engine.counters().refused() == 0);
  CHECK(f.engine.usage().pinned_bytes() == 0);
  // ... and the app's own syscall then runs it as usual.
  auto mr = f.file->BeginIoctl(f.memory, f.fds, mr_arg);
  REQUIRE(mr.ok());
  CHECK(f.engine.counters().commands == 2);

  // A command that names an fd (a completion channel) or returns one is the app's too.
  IoctlBuilder ev(UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, RDMA_DRIVER_RXE);
  ev.Handle(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0);
  CHECK_FALSE(f.file->IoctlAsForwarder(f.memory, f.host, f.memory.PutBytes(ev.Build())).has_value());
  const uint64_t cq = f.memory.PutBytes(CreateCqWithChannel(f.memory, 4));
  CHECK_FALSE(f.file->IoctlAsForwarder(f.memory, f.host, cq).has_value());
  CHECK(f.host.calls == 1);

  // A genuine refusal is answered as one: counted, logged, never issued.
  IoctlBuilder bad(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
  bad.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, 99);
  auto refused = f.file->IoctlAsForwarder(f.memory, f.host, f.memory.PutBytes(bad.Build()));
  REQUIRE(refused.has_value());
  CHECK(*refused == -ENOENT);
  CHECK(f.host.calls == 1);
  CHECK(f.engine.counters().refused() == 1);
}

// rxe's post_send_db(): the doorbell a program writes after every post. The forwarder cannot
// write() it (ib_safe_file_access), so it runs the same handler through INVOKE_WRITE.
TEST_CASE("as the forwarder: fds it holds descriptors of are named by its own numbers, any "
          "other fd leaves the command to the app",
          "[engine]") {
  Fixture f(0);
  // The forwarder's own descriptors: app fd 4 is a completion channel of this file (the
  // forwarder's number for it is 44), app fd 5 one of another file.
  FakeFdBridge own;
  own.Add(4, {44, FileKind::kCompChannel, f.file->id()});
  own.Add(5, {55, FileKind::kCompChannel, f.file->id() + 1});
  auto create_cq = [&](int channel) {
    return f.memory.PutBytes(CreateCqWithChannel(f.memory, channel));
  };
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    CHECK(fw.Find(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL)->data == 44);  // the forwarder's fd
    fw.Find(UVERBS_ATTR_CREATE_CQ_HANDLE)->data = 9;  // the new CQ's handle
    return 0L;
  };
  const uint64_t arg = create_cq(4);
  auto issued = f.file->IoctlAsForwarder(f.memory, f.host, arg, &own);
  REQUIRE(issued.has_value());
  CHECK(*issued == 0);
  CHECK(f.host.calls == 1);
  CHECK(f.file->live_objects() == 1);
  // The app reads back its own fd number, never the forwarder's.
  const auto back = f.memory.Get<ib_uverbs_attr>(arg + sizeof(abi::IoctlHeader) +
                                                 5 * sizeof(ib_uverbs_attr));
  CHECK(back.attr_id == UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL);
  CHECK(back.data == 4);

  // Another file's channel: refused as the kernel would (EBADF), counted, never issued.
  auto wrong = f.file->IoctlAsForwarder(f.memory, f.host, create_cq(5), &own);
  REQUIRE(wrong.has_value());
  CHECK(*wrong == -EBADF);
  CHECK(f.host.calls == 1);
  // An fd number that does not fit an int is the kernel's EINVAL (lookup_get_fd_uobject()),
  // never its low 32 bits' file: refused, not issued.
  for (const uint64_t raw : {(1ull << 32) | 4u, 0xffffffff00000004ull}) {
    IoctlBuilder cq = CqCreate(RDMA_DRIVER_RXE, f.memory.Alloc(4), 0x1234);
    cq.Handle(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, raw, kOpt);
    auto high = f.file->IoctlAsForwarder(f.memory, f.host, f.memory.PutBytes(cq.Build()), &own);
    REQUIRE(high.has_value());
    CHECK(*high == -EINVAL);
    CHECK(f.host.calls == 1);
  }
  CHECK(f.file->live_objects() == 1);
  // An fd the forwarder holds no descriptor of: the app's, nothing counted.
  const uint64_t counted = f.engine.counters().commands;
  CHECK_FALSE(f.file->IoctlAsForwarder(f.memory, f.host, create_cq(6), &own).has_value());
  CHECK(f.engine.counters().commands == counted);
  CHECK(f.host.calls == 1);
}

TEST_CASE("as the forwarder: the rxe send doorbell runs as INVOKE_WRITE, other writes are the "
          "app's",
          "[engine][write]") {
  Fixture f;  // the objects are tracked through the app's own path first
  TrackPd(f, 7);
  TrackCq(f, 12);
  TrackRcQp(f, 3, 7, 12);
  f.trace.clear();
  const int calls = f.host.calls;
  const uint64_t counted = f.engine.counters().commands;
  const uint64_t resp = f.memory.Put<uint32_t>(0xdeadbeef);
  const auto doorbell = DoorbellWrite(resp, 3);
  f.host.on_write = [](const void*, size_t) -> long {
    FAIL("the forwarder wrote a verbs command");
    return -EACCES;
  };
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    CHECK(fw.header.object_id == UVERBS_OBJECT_DEVICE);
    CHECK(fw.header.method_id == UVERBS_METHOD_INVOKE_WRITE);
    CHECK(fw.header.driver_id == RDMA_DRIVER_RXE);
    CHECK(fw.header.num_attrs == 3);
    CHECK(fw.header.length == sizeof(abi::IoctlHeader) + 3 * sizeof(ib_uverbs_attr));
    REQUIRE(fw.Find(UVERBS_ATTR_WRITE_CMD) != nullptr);
    CHECK(fw.Find(UVERBS_ATTR_WRITE_CMD)->data == IB_USER_VERBS_CMD_POST_SEND);
    const ib_uverbs_attr* in = fw.Find(UVERBS_ATTR_CORE_IN);
    REQUIRE(in != nullptr);
    REQUIRE(in->len == sizeof(ib_uverbs_post_send));
    ib_uverbs_post_send seen;
    std::memcpy(&seen, reinterpret_cast<const void*>(in->data), sizeof(seen));
    CHECK(seen.qp_handle == 3);
    CHECK(seen.wr_count == 0);
    CHECK(seen.sge_count == 0);
    CHECK(seen.wqe_size == sizeof(ib_uverbs_send_wr));
    const ib_uverbs_attr* out = fw.Find(UVERBS_ATTR_CORE_OUT);
    REQUIRE(out != nullptr);
    CHECK(out->len == sizeof(ib_uverbs_post_send_resp));
    CHECK(out->data != resp);  // the forwarder's bounce buffer, not the app's address
    fw.Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_post_send_resp{0});
    return 0L;
  };
  auto rung = f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(doorbell),
                                       doorbell.size());
  REQUIRE(rung.has_value());
  CHECK(*rung == static_cast<long>(doorbell.size()));  // what write() returns
  CHECK(f.host.calls == calls + 1);
  CHECK(f.memory.Get<uint32_t>(resp) == 0);  // bad_wr, where the app asked for it
  CHECK(f.engine.counters().commands == counted + 1);
  CHECK(f.engine.counters().forwarded == counted + 1);
  REQUIRE(f.trace.size() == 1);  // the same line as the app's own write
  CHECK(f.trace[0] == "write(uverbs0, POST_SEND{qp_handle=3 wr_count=0 sge_count=0 wqe_size=56}) = 32 {bad_wr=0}");

  // Not a doorbell: work requests in the write (rdma-core's generic ibv_cmd_post_send), any
  // other command, a doorbell with trailing bytes. Left to the app, nothing counted or logged.
  const size_t log_lines = f.log.size();
  ib_uverbs_post_send with_wr = DoorbellRequest(resp, 3);
  with_wr.wr_count = 1;
  std::vector<std::byte> wr(sizeof(ib_uverbs_send_wr));
  const auto posting = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, with_wr, wr, 1);
  CHECK_FALSE(f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(posting),
                                       posting.size()).has_value());
  ib_uverbs_dealloc_pd dealloc{};
  dealloc.pd_handle = 7;
  const auto other = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_DEALLOC_PD, dealloc, {}, 0);
  CHECK_FALSE(f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(other),
                                       other.size()).has_value());
  std::vector<std::byte> longer = doorbell;
  longer.resize(longer.size() + 8);
  CHECK_FALSE(f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(longer),
                                       longer.size()).has_value());
  CHECK(f.host.calls == calls + 1);
  CHECK(f.engine.counters().commands == counted + 1);
  CHECK(f.log.size() == log_lines);

  // A doorbell for a QP this file never created is refused as the app's write would be
  // (ENOENT, counted and logged), and nothing reaches the device.
  const auto stranger = DoorbellWrite(resp, 4);
  auto refused = f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(stranger),
                                          stranger.size());
  REQUIRE(refused.has_value());
  CHECK(*refused == -ENOENT);
  CHECK(f.host.calls == calls + 1);
  CHECK(f.engine.counters().refused_state == 1);

  // The kernel's error is the app's answer.
  f.host.on_ioctl = [](void*) { return -EINVAL; };
  const auto again = DoorbellWrite(resp, 3);
  auto failed = f.file->WriteAsForwarder(f.memory, f.host, f.memory.PutBytes(again), again.size());
  REQUIRE(failed.has_value());
  CHECK(*failed == -EINVAL);
  CHECK(f.engine.counters().kernel_errors == 1);
}

// The fake kernel answers every INVOKE_WRITE(ALLOC_PD) with PD `handle`.
void KernelAllocatesPd(Fixture& f, uint32_t handle) {
  f.host.on_ioctl = [handle](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{handle});
    return 0L;
  };
}

TEST_CASE("closing a file gives its objects back to the sandbox quotas", "[engine]") {
  Fixture f;
  KernelAllocatesPd(f, 1);
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(AllocPd(f.memory, &resp)) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 1);
  f.file.reset();
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

// ib_init_ucontext: a file with a context answers a second GET_CONTEXT with EINVAL. The
// proxy forwards it for the kernel to answer; it must not count a second context against the
// sandbox's quota (with `contexts: 1` that was the proxy's EDQUOT where the kernel says
// EINVAL), nor keep one after the file closes, whatever the kernel answered.
TEST_CASE("a second GET_CONTEXT on a file takes no second context from the quota", "[engine]") {
  PolicyConfig one;
  one.quotas.contexts = 1;
  Fixture f(kMirror, one);
  IoctlBuilder ctx(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, RDMA_DRIVER_RXE);
  ctx.Pointer(UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, f.memory.Alloc(4), 4, kOpt);
  const auto request = ctx.Build();
  REQUIRE(f.Ioctl(request) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);
  f.host.on_ioctl = [](void*) { return -EINVAL; };  // the kernel's answer
  CHECK(f.Ioctl(request) == -EINVAL);
  CHECK(f.host.calls == 2);
  CHECK(f.engine.counters().refused_quota == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);
  // A kernel that said yes (the engine fuzzer's) still leaves one context, given back at close.
  f.host.on_ioctl = [](void*) { return 0L; };
  CHECK(f.Ioctl(request) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);
  f.file.reset();
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 0);
}

// A handle the kernel hands out is free in its table, so an object still tracked under that
// handle is gone: the quota it held is given back, not kept forever (found by the engine
// fuzzer's command sequences, whose fake kernel numbers objects as it likes).
TEST_CASE("a new object under a handle still tracked replaces it in the quota", "[engine]") {
  Fixture f;
  KernelAllocatesPd(f, 7);
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(AllocPd(f.memory, &resp)) == 0);
  REQUIRE(f.Ioctl(AllocPd(f.memory, &resp)) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 1);
  f.file.reset();
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

// Identity mode (the harness): the kernel writes a new object's handle into the app's
// response, and another thread may unmap it before the proxy reads it back. The object exists
// all the same, so what it holds stays counted until the file closes (found by the engine
// fuzzer: a response the proxy could not read).
TEST_CASE("a new object whose handle cannot be read back stays counted until the file closes",
          "[engine]") {
  Fixture f(/*mirror=*/0);
  const uint64_t resp = f.memory.Alloc(sizeof(ib_uverbs_alloc_pd_resp));
  ib_uverbs_alloc_pd cmd{};
  cmd.response = resp;
  const auto request = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_ALLOC_PD, cmd, {},
                                                 sizeof(ib_uverbs_alloc_pd_resp) / 4);
  const uint64_t at = f.memory.PutBytes(request);
  f.host.on_write = [&](const void*, size_t len) {
    f.memory.Unmap(resp);
    return static_cast<long>(len);
  };
  CHECK(f.file->Write(f.memory, f.fds, f.host, at, request.size()) ==
        static_cast<long>(request.size()));
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 1);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("ALLOC_PD succeeded but its new handle could not be read back") !=
        std::string::npos);
  f.file.reset();
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

TEST_CASE("an interrupted command (-ERESTARTSYS at the exit stop) is not counted: it runs again",
          "[engine]") {
  // The harness sees the raw result at the syscall-exit stop when a freeze interrupts a call;
  // the kernel restarts it and the restart is a command of its own.
  Fixture f;
  f.host.on_ioctl = [](void*) { return -512L; };  // ERESTARTSYS
  uint64_t resp = 0;
  CHECK(f.Ioctl(AllocPd(f.memory, &resp)) == -512);
  CHECK(f.engine.counters().commands == 0);
  CHECK(f.engine.counters().forwarded == 0);
  CHECK(f.engine.counters().kernel_errors == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);  // the reservation is given back
  f.host.on_ioctl = [](void*) { return -EINTR; };        // what the program may see: an error
  CHECK(f.Ioctl(AllocPd(f.memory, &resp)) == -EINTR);
  CHECK(f.engine.counters().commands == 1);
  CHECK(f.engine.counters().kernel_errors == 1);
}

// What the kernel writes back for the app must land, or the command fails as natively: with
// EFAULT, before forwarding for a create (the kernel would undo the object), after the kernel
// ran it otherwise (copy_out.h).
TEST_CASE("a create whose results the app cannot take is refused before the kernel",
          "[engine][copy_out]") {
  SECTION("sentry mode: a read-only CORE_OUT (ib_uverbs_alloc_pd's err_copy)") {
    Fixture f;
    uint64_t resp = 0;
    auto req = AllocPd(f.memory, &resp);
    f.memory.Protect(resp);
    CHECK(f.Ioctl(req) == -EFAULT);
    CHECK(f.host.calls == 0);
    CHECK(f.engine.counters().refused_state == 1);
    CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
    REQUIRE(!f.log.empty());
    CHECK(f.log.back().find("response buffer") != std::string::npos);
  }
  for (const uint64_t mirror : {kMirror, uint64_t{0}}) {
    DYNAMIC_SECTION("a read-only attribute array, mirror " << mirror) {
      // uverbs_process_attr puts the new CQ's id into the app's array before the handler.
      Fixture f(mirror);
      const uint64_t arg = f.memory.PutBytes(CqCreate(RDMA_DRIVER_RXE, f.memory.Alloc(4)).Build());
      f.memory.Protect(arg);
      auto begun = f.file->BeginIoctl(f.memory, f.fds, arg);
      REQUIRE_FALSE(begun.ok());
      CHECK(begun.error().errnum == EFAULT);
      CHECK(f.engine.counters().forwarded == 0);
      CHECK(f.engine.usage().live(UVERBS_OBJECT_CQ) == 0);
      REQUIRE(!f.log.empty());
      CHECK(f.log.back().find("attribute array") != std::string::npos);
    }
  }
  SECTION("a writable attribute array: the app's bytes are written back unchanged") {
    Fixture f(0);
    const auto request = CqCreate(RDMA_DRIVER_RXE, f.memory.Alloc(4)).Build();
    const uint64_t arg = f.memory.PutBytes(request);
    auto begun = f.file->BeginIoctl(f.memory, f.fds, arg);
    REQUIRE(begun.ok());
    std::vector<std::byte> now(request.size());
    REQUIRE(f.memory.Read(arg, now).ok());
    CHECK(now == request);
  }
}

TEST_CASE("a result that cannot be copied back fails the command with EFAULT after the kernel "
          "ran it", "[engine][copy_out]") {
  const auto query_port = [](uint64_t resp) {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, RDMA_DRIVER_RXE);
    b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
        .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, resp, sizeof(ib_uverbs_query_port_resp_ex));
    return b.Build();
  };
  SECTION("sentry mode: a read-only response buffer") {
    Fixture f;
    f.host.on_ioctl = [](void* arg) {
      Forwarded(arg).Output(UVERBS_ATTR_QUERY_PORT_RESP, ib_uverbs_query_port_resp_ex{});
      return 0L;
    };
    const uint64_t resp = f.memory.Alloc(sizeof(ib_uverbs_query_port_resp_ex));
    f.memory.Protect(resp);
    CHECK(f.Ioctl(query_port(resp)) == -EFAULT);
    CHECK(f.host.calls == 1);
    REQUIRE(!f.log.empty());
    CHECK(f.log.back().find("QUERY_PORT succeeded but its results cannot be copied back") !=
          std::string::npos);
  }
  SECTION("identity mode: a read-only attribute array the kernel sets VALID_OUTPUT in") {
    Fixture f(0);
    const uint64_t arg =
        f.memory.PutBytes(query_port(f.memory.Alloc(sizeof(ib_uverbs_query_port_resp_ex))));
    f.memory.Protect(arg);
    auto c = f.file->BeginIoctl(f.memory, f.fds, arg);
    REQUIRE(c.ok());  // nothing is made: the kernel runs it, as natively
    const uint64_t scratch = 0x600000000000;
    auto image = (*c)->image.Relocated(scratch);
    Forwarded(image.data()).Find(UVERBS_ATTR_QUERY_PORT_RESP)->flags |=
        UVERBS_ATTR_F_VALID_OUTPUT;
    CHECK(f.file->Complete(**c, 0, image, scratch, f.memory, f.fds) == -EFAULT);
  }
}

}  // namespace
}  // namespace rxp::proxy

namespace rxp::proxy {
namespace {

// mlx5's attributes on core methods that have no driver data (DM.ALLOC, DEVICE.QUERY_CONTEXT)
// and on its own methods (DEVX_OTHER) number from UVERBS_ID_DRIVER_NS, as UHW_IN does: the
// driver request is the attribute the schema says is one, never attribute 0x1000 by number.
TEST_CASE("mlx5 attributes numbered like UHW_IN are not taken for driver data", "[engine][mlx5]") {
  static_assert(uint32_t{MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET} == uint32_t{UVERBS_ATTR_UHW_IN});
  static_assert(uint32_t{MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX} == uint32_t{UVERBS_ATTR_UHW_IN});
  static_assert(uint32_t{MLX5_IB_ATTR_DEVX_OTHER_CMD_IN} == uint32_t{UVERBS_ATTR_UHW_IN});
  for (const uint64_t mirror : {kMirror, uint64_t{0}}) {
    INFO((mirror != 0 ? "sentry mode" : "identity mode"));
    // ibv_alloc_dm as rdma-core's alloc_dm_memic sends it (providers/mlx5/verbs.c).
    Fixture f(mirror, {}, RDMA_DRIVER_MLX5);
    f.host.on_ioctl = [&f](void* arg) {
      Forwarded fw(arg);
      fw.Find(UVERBS_ATTR_ALLOC_DM_HANDLE)->data = 5;
      if (!f.memory.IdentityMapped()) {
        fw.Output(MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, uint64_t{0x1040});
        fw.Output(MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, uint16_t{1});
      }
      return 0L;
    };
    const uint64_t start = f.memory.Alloc(8);
    IoctlBuilder dm(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, RDMA_DRIVER_MLX5);
    dm.Inline(MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE, MLX5_IB_UAPI_DM_TYPE_MEMIC, 8, kOpt)
        .Pointer(MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, start, 8)
        .Pointer(MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, f.memory.Alloc(2), 2)
        .Handle(UVERBS_ATTR_ALLOC_DM_HANDLE, 0)
        .Inline(UVERBS_ATTR_ALLOC_DM_LENGTH, 4096, 8)
        .Inline(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, 0, 4);
    CHECK(f.Ioctl(dm.Build()) == 0);
    CHECK(f.host.calls == 1);
    if (mirror != 0) CHECK(f.memory.Get<uint64_t>(start) == 0x1040);

    // ibv_import_device's QUERY_CONTEXT (mlx5_import_context).
    f.host.on_ioctl = [](void*) { return 0L; };
    IoctlBuilder q(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, RDMA_DRIVER_MLX5);
    q.Pointer(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
              f.memory.Alloc(sizeof(mlx5_ib_alloc_ucontext_resp)),
              sizeof(mlx5_ib_alloc_ucontext_resp))
        .Pointer(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, f.memory.Alloc(4), 4)
        .Pointer(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, f.memory.Alloc(8), 8);
    CHECK(f.Ioctl(q.Build()) == 0);
    CHECK(f.host.calls == 2);
  }

  // DEVX in "query" mode: rdma-core's QUERY_HCA_CAP at open (get_hca_general_caps), whose
  // CMD_IN is attribute 0x1000 of a method with no driver data.
  auto query = PolicyConfig::FromJson(R"({"version": 1, "devx": "query"})");
  REQUIRE(query.ok());
  Fixture f(kMirror, *query, RDMA_DRIVER_MLX5);
  f.host.on_ioctl = [](void*) { return 0L; };
  const uint8_t in[16] = {0x01, 0x00};  // MLX5_CMD_OP_QUERY_HCA_CAP (0x100), big-endian
  std::vector<std::byte> in_bytes(sizeof(in));
  std::memcpy(in_bytes.data(), in, sizeof(in));
  IoctlBuilder devx(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_OTHER, RDMA_DRIVER_MLX5);
  devx.Pointer(MLX5_IB_ATTR_DEVX_OTHER_CMD_IN, f.memory.PutBytes(in_bytes), sizeof(in))
      .Pointer(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT, f.memory.Alloc(4096), 4096);
  CHECK(f.Ioctl(devx.Build()) == 0);
  CHECK(f.host.calls == 1);
}

}  // namespace
}  // namespace rxp::proxy

namespace rxp::proxy {
namespace {

// Device memory and UARs are the NIC's, shared by every sandbox on it: "dms" and "uars" bound
// what one sandbox holds (EDQUOT, not forwarded).
TEST_CASE("quotas: dms and uars bound device memory and UAR allocations", "[engine][mlx5]") {
  auto policy = PolicyConfig::FromJson(R"({"version": 1, "quotas": {"dms": 1, "uars": 1}})");
  REQUIRE(policy.ok());
  Fixture f(kMirror, *policy, RDMA_DRIVER_MLX5);
  uint32_t next = 5;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded fw(arg);
    if (fw.header.object_id == UVERBS_OBJECT_DM)
      fw.Find(UVERBS_ATTR_ALLOC_DM_HANDLE)->data = next++;
    else
      fw.Find(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE)->data = next++;
    return 0L;
  };
  const auto dm = [&f]() {
    IoctlBuilder b(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, RDMA_DRIVER_MLX5);
    b.Inline(MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE, MLX5_IB_UAPI_DM_TYPE_MEMIC, 8, kOpt)
        .Pointer(MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, f.memory.Alloc(8), 8)
        .Pointer(MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, f.memory.Alloc(2), 2)
        .Handle(UVERBS_ATTR_ALLOC_DM_HANDLE, 0)
        .Inline(UVERBS_ATTR_ALLOC_DM_LENGTH, 4096, 8)
        .Inline(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, 0, 4);
    return f.Ioctl(b.Build());
  };
  const auto uar = [&f]() {
    IoctlBuilder b(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC, RDMA_DRIVER_MLX5);
    b.Handle(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0)
        .Inline(MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, 8)
        .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, f.memory.Alloc(8), 8)
        .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, f.memory.Alloc(4), 4)
        .Pointer(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, f.memory.Alloc(4), 4);
    return f.Ioctl(b.Build());
  };
  CHECK(dm() == 0);
  CHECK(uar() == 0);
  const int calls = f.host.calls;
  CHECK(dm() == -EDQUOT);
  CHECK(uar() == -EDQUOT);
  CHECK(f.host.calls == calls);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("uars") != std::string::npos);
}

// mlx5_ib_resize_cq compares the entries with the CQ's when it runs: a RESIZE_CQ to the
// entries the CQ has when the proxy begins it changes nothing only if no other resize of the
// CQ runs first. So it is in flight like any resize, and one begun beside another is EBUSY.
TEST_CASE("a RESIZE_CQ to the CQ's own size begun beside another resize is EBUSY",
          "[engine][mlx5]") {
  Fixture f(kMirror, PinnedQuota(1 << 20), RDMA_DRIVER_MLX5);
  uint32_t next_handle = 12;
  AnswerCqCreateAndResize(f, next_handle);
  const uint64_t db_page = f.memory.Alloc(4096);
  const uint64_t buf = f.memory.Alloc(8192);
  REQUIRE(f.Ioctl(Mlx5CreateCq(f.memory, buf, db_page)) == 0);  // 32 entries: a page
  CHECK(f.engine.usage().pinned_bytes() == 8192);                 // and the doorbell page
  const auto resize = [&](uint32_t cqe) {
    ib_uverbs_resize_cq r{};
    r.cq_handle = 12;
    r.cqe = cqe;
    mlx5_ib_resize_cq rcmd{};
    rcmd.buf_addr = buf;
    rcmd.cqe_size = 64;
    return f.file->BeginIoctl(
        f.memory, f.fds,
        f.memory.PutBytes(InvokeWriteMlx5(f.memory, IB_USER_VERBS_CMD_RESIZE_CQ, r,
                                          sizeof(ib_uverbs_resize_cq_resp), rcmd)));
  };
  auto grow = resize(127);  // 128 entries: 8 KiB
  REQUIRE(grow.ok());
  auto same = resize(31);  // the 32 it has now, 2 KiB had the kernel run it first
  REQUIRE_FALSE(same.ok());
  CHECK(same.error().errnum == EBUSY);
  auto image = (*grow)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**grow, 0, image, reinterpret_cast<uint64_t>(image.data()), f.memory,
                           f.fds) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 8192 + 4096);
  // Alone, a resize to the entries the CQ has is no longer busy and changes nothing.
  auto again = resize(127);
  REQUIRE(again.ok());
  image = (*again)->image.RelocateInPlace();
  REQUIRE(f.file->Complete(**again, 0, image, reinterpret_cast<uint64_t>(image.data()),
                           f.memory, f.fds) == 0);
  CHECK(f.engine.usage().pinned_bytes() == 8192 + 4096);
}

}  // namespace
}  // namespace rxp::proxy
