#include "rdmaproxy/uverbs_file.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>

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
                   uint32_t driver = RDMA_DRIVER_RXE)
      : memory(mirror), engine(MakeOptions(std::move(policy))) {
    file = engine.OpenUverbs("uverbs0", driver);
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
};

// INVOKE_WRITE(ALLOC_PD) as rdma-core sends it: CORE_IN, CORE_OUT.
std::vector<std::byte> AllocPd(FakeAppMemory& mem, uint64_t* resp_out) {
  // The 8-byte request (just the ignored `response`) travels inline, as rdma-core sends it.
  *resp_out = mem.Alloc(sizeof(ib_uverbs_alloc_pd_resp));
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_ALLOC_PD, 8)
      .Inline(UVERBS_ATTR_CORE_IN, 0, sizeof(ib_uverbs_alloc_pd))
      .Pointer(UVERBS_ATTR_CORE_OUT, *resp_out, sizeof(ib_uverbs_alloc_pd_resp));
  return b.Build();
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

  IoctlBuilder good(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
  good.Handle(UVERBS_ATTR_DESTROY_PD_HANDLE, 7);
  CHECK(f.Ioctl(good.Build()) == 0);
  CHECK(f.file->live_objects() == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

std::vector<std::byte> RegMr(FakeAppMemory& mem, uint64_t buffer, uint64_t length,
                             uint64_t* resp_out) {
  ib_uverbs_reg_mr req{};
  req.start = buffer;
  req.length = length;
  req.hca_va = buffer;
  req.pd_handle = 7;
  req.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE;
  const uint64_t in = mem.Put(req);
  *resp_out = mem.Alloc(sizeof(ib_uverbs_reg_mr_resp));
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_REG_MR, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, in, sizeof(req))
      .Pointer(UVERBS_ATTR_CORE_OUT, *resp_out, sizeof(ib_uverbs_reg_mr_resp));
  return b.Build();
}

TEST_CASE("REG_MR: start is translated to the host view, hca_va kept, quota enforced",
          "[engine]") {
  PolicyConfig policy;
  policy.quotas.pinned_bytes = 64 * 1024;
  Fixture f(kMirror, policy);
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

TEST_CASE("identity mode: the image carries the app's own addresses", "[engine]") {
  Fixture f(0);
  const uint64_t buffer = f.memory.Alloc(8192);
  uint64_t resp = 0;
  auto req = RegMr(f.memory, buffer, 8192, &resp);
  const uint64_t arg = f.memory.PutBytes(req);
  auto c = f.file->BeginIoctl(f.memory, f.fds, arg);
  REQUIRE(c.ok());
  // Relocate at a pretend scratch address and check CORE_OUT still points to the app.
  const uint64_t scratch = 0x600000000000;
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
  CHECK(f.file->live_objects() == 1);
  CHECK(f.engine.usage().pinned_bytes() == 8192);
}

TEST_CASE("fds: completion channels must be this file's, new fds become app fds", "[engine]") {
  Fixture f;
  f.fds.Add(3, {33, FileKind::kOther, 0});                    // some non-RDMA fd
  f.fds.Add(4, {44, FileKind::kCompChannel, f.file->id()});  // a channel of this file
  f.fds.Add(5, {55, FileKind::kCompChannel, 999});           // another file's channel
  auto cq = [&](int channel) {
    const uint64_t resp = f.memory.Alloc(4);
    IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, RDMA_DRIVER_RXE);
    b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
        .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 16, 4)
        .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 0x1234, 8)
        .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
        .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, resp, 4)
        .Handle(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, static_cast<uint64_t>(channel), kOpt);
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
  // GET_CONTEXT asking for a DEVX uid.
  mlx5_ib_alloc_ucontext_req_v2 uctx{};
  uctx.flags = MLX5_IB_ALLOC_UCTX_DEVX;
  IoctlBuilder ctx(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, RDMA_DRIVER_MLX5);
  ctx.Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(uctx), sizeof(uctx), kOpt)
      .Pointer(UVERBS_ATTR_UHW_OUT, f.memory.Alloc(sizeof(mlx5_ib_alloc_ucontext_resp)),
               sizeof(mlx5_ib_alloc_ucontext_resp), kOpt);
  CHECK(f.Ioctl(ctx.Build()) == -EPROTONOSUPPORT);
  CHECK(f.host.calls == 0);
  CHECK(f.engine.counters().refused_policy == 3);
  // Without the flag, GET_CONTEXT goes through.
  uctx.flags = 0;
  IoctlBuilder ctx2(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, RDMA_DRIVER_MLX5);
  ctx2.Pointer(UVERBS_ATTR_UHW_IN, f.memory.Put(uctx), sizeof(uctx), kOpt);
  CHECK(f.Ioctl(ctx2.Build()) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_DEVICE) == 1);
}

TEST_CASE("rxe: queue mmap cookies from create responses are mappable once", "[engine][mmap]") {
  Fixture f;
  const uint64_t uhw = f.memory.Alloc(sizeof(rxe_create_cq_resp));
  const uint64_t resp = f.memory.Alloc(4);
  IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, RDMA_DRIVER_RXE);
  b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
      .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 16, 4)
      .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 0, 8)
      .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
      .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, resp, 4)
      .Pointer(UVERBS_ATTR_UHW_OUT, uhw, sizeof(rxe_create_cq_resp), kOpt);
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
  f.file->Mapped(0x89000);
  CHECK(f.file->CheckMmap(0x89000, 69632, PROT_READ).error().errnum == EINVAL);
}

TEST_CASE("legacy write: POST_SEND doorbell and a response through a bounce buffer",
          "[engine][write]") {
  Fixture f;
  const uint64_t resp = f.memory.Alloc(4);
  ib_uverbs_post_send p{};
  p.response = resp;
  p.qp_handle = 3;
  p.wqe_size = sizeof(ib_uverbs_send_wr);
  auto buf = abi::testing::LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, {}, 1);
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
  CHECK(f.host.calls == 1);
  CHECK(f.engine.counters().refused_decode == 1);
}

TEST_CASE("closing a file gives its objects back to the sandbox quotas", "[engine]") {
  Fixture f;
  f.host.on_ioctl = [&](void* arg) {
    Forwarded(arg).Output(UVERBS_ATTR_CORE_OUT, ib_uverbs_alloc_pd_resp{1});
    return 0L;
  };
  uint64_t resp = 0;
  REQUIRE(f.Ioctl(AllocPd(f.memory, &resp)) == 0);
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 1);
  f.file.reset();
  CHECK(f.engine.usage().live(UVERBS_OBJECT_PD) == 0);
}

}  // namespace
}  // namespace rxp::proxy
