#include "abi/trace_printer.h"

#include <catch2/catch.hpp>

#include <map>

#include "abi/testing/request_builder.h"

namespace rxp::abi {
namespace {

using testing::Bytes;
using testing::IoctlBuilder;

// App memory as a map of address -> bytes.
class FakeMemory final : public PayloadSource {
 public:
  void Put(uint64_t addr, std::vector<std::byte> data) { mem_[addr] = std::move(data); }
  std::optional<std::span<const std::byte>> Read(uint64_t addr, size_t len) const override {
    auto it = mem_.find(addr);
    if (it == mem_.end() || it->second.size() < len) return std::nullopt;
    return std::span<const std::byte>(it->second.data(), len);
  }

 private:
  std::map<uint64_t, std::vector<std::byte>> mem_;
};

const DeviceAbi kRxe = DeviceAbiFor(RDMA_DRIVER_RXE);

TEST_CASE("QP.CREATE prints its inputs and, after the call, its outputs", "[printer]") {
  FakeMemory in, out;
  ib_uverbs_qp_cap cap{128, 128, 1, 1, 0};
  in.Put(0x1000, Bytes(cap));
  IoctlBuilder b(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, RDMA_DRIVER_RXE);
  b.Handle(UVERBS_ATTR_CREATE_QP_HANDLE, 0)
      .Handle(UVERBS_ATTR_CREATE_QP_PD_HANDLE, 3)
      .Handle(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 1)
      .Handle(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 1)
      .Inline(UVERBS_ATTR_CREATE_QP_USER_HANDLE, 0xabc, 8)
      .Pointer(UVERBS_ATTR_CREATE_QP_CAP, 0x1000, sizeof(cap))
      .Inline(UVERBS_ATTR_CREATE_QP_TYPE, IB_UVERBS_QPT_RC, 8)
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_CAP, 0x2000, sizeof(cap))
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 0x3000, 4);
  auto bytes = b.Build();
  IoctlRequest r;
  REQUIRE(DecodeIoctl(bytes, kRxe, r).ok());
  const std::string request = FormatIoctl("uverbs0", r, kRxe, in, nullptr);
  CHECK(request ==
        "ioctl(uverbs0, QP.CREATE{pd=3 send_cq=1 recv_cq=1 user_handle=0xabc "
        "cap={max_send_wr=128 max_recv_wr=128 max_send_sge=1 max_recv_sge=1 "
        "max_inline_data=0} type=RC})");

  // After the call: the kernel wrote handle 5 into the NEW attribute and filled the outputs.
  std::vector<std::byte> after(bytes.begin() + sizeof(IoctlHeader), bytes.end());
  ib_uverbs_attr a;
  std::memcpy(&a, after.data(), sizeof(a));
  a.data = 5;
  std::memcpy(after.data(), &a, sizeof(a));
  for (size_t i = 7; i < 9; ++i) {
    std::memcpy(&a, after.data() + i * sizeof(a), sizeof(a));
    a.flags |= UVERBS_ATTR_F_VALID_OUTPUT;
    std::memcpy(after.data() + i * sizeof(a), &a, sizeof(a));
  }
  out.Put(0x2000, Bytes(cap));
  out.Put(0x3000, Bytes(uint32_t{0x11}));
  CallOutcome o;
  o.attrs_after = after;
  o.out = &out;
  const std::string line = FormatIoctl("uverbs0", r, kRxe, in, &o);
  CHECK(line.substr(request.size()) ==
        " = 0 {handle=5 cap={max_send_wr=128 max_recv_wr=128 max_send_sge=1 max_recv_sge=1 "
        "max_inline_data=0} qpn=0x11}");
}

// App memory where an empty read has no storage at all (a zero-length vector's data()).
class NullEmptyMemory final : public PayloadSource {
 public:
  std::optional<std::span<const std::byte>> Read(uint64_t, size_t len) const override {
    if (len == 0) return std::span<const std::byte>();
    return std::nullopt;
  }
};

// Found by fuzz.engine (UBSan: memcpy from a null source): a zero-length output attribute
// printed after a successful call.
TEST_CASE("a zero-length output prints without reading from its (absent) storage",
          "[printer]") {
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, 32, 8)
      .Pointer(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, 0x2000, 0)
      .Pointer(UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, 0x3000, 8);
  auto bytes = b.Build();
  IoctlRequest r;
  REQUIRE(DecodeIoctl(bytes, kRxe, r).ok());
  std::vector<std::byte> after(bytes.begin() + sizeof(IoctlHeader), bytes.end());
  for (size_t i = 1; i < 3; ++i) {
    ib_uverbs_attr a;
    std::memcpy(&a, after.data() + i * sizeof(a), sizeof(a));
    a.flags |= UVERBS_ATTR_F_VALID_OUTPUT;
    std::memcpy(after.data() + i * sizeof(a), &a, sizeof(a));
  }
  NullEmptyMemory out;
  CallOutcome o;
  o.attrs_after = after;
  o.out = &out;
  const std::string line = FormatIoctl("uverbs0", r, kRxe, EmptyPayloadSource(), &o);
  CHECK(line.starts_with("ioctl(uverbs0, DEVICE.QUERY_GID_TABLE{"));
  CHECK(line.find(" = 0") != std::string::npos);
}

TEST_CASE("INVOKE_WRITE prints the wrapped command's fields", "[printer]") {
  FakeMemory in, out;
  ib_uverbs_reg_mr mr{};
  mr.start = 0x7f0000001000;
  mr.length = 4096;
  mr.hca_va = 0x7f0000001000;
  mr.pd_handle = 1;
  mr.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_READ;
  in.Put(0x1000, Bytes(mr));
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_REG_MR, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, 0x1000, sizeof(mr))
      .Pointer(UVERBS_ATTR_CORE_OUT, 0x2000, sizeof(ib_uverbs_reg_mr_resp));
  auto bytes = b.Build();
  IoctlRequest r;
  REQUIRE(DecodeIoctl(bytes, kRxe, r).ok());
  ib_uverbs_reg_mr_resp resp{2, 0x1234, 0x5678};
  out.Put(0x2000, Bytes(resp));
  CallOutcome o;
  o.out = &out;  // no attrs_after: outputs are printed whether or not VALID_OUTPUT is known
  CHECK(FormatIoctl("uverbs0", r, kRxe, in, &o) ==
        "ioctl(uverbs0, INVOKE_WRITE REG_MR{start=0x7f0000001000 length=4096 "
        "hca_va=0x7f0000001000 pd_handle=1 access_flags=LOCAL_WRITE|REMOTE_READ}) = 0 "
        "{mr_handle=2 lkey=0x1234 rkey=0x5678}");
  o.errnum = EPERM;
  o.reason = "pinned-memory quota of 64 KiB exceeded";
  CHECK(FormatIoctl("uverbs0", r, kRxe, in, &o).ends_with(
      ") = -1 EPERM (pinned-memory quota of 64 KiB exceeded)"));
}

TEST_CASE("legacy writes print core, driver data and responses", "[printer]") {
  ib_uverbs_post_send p{};
  p.response = 0x4000;
  p.qp_handle = 3;
  p.wqe_size = sizeof(ib_uverbs_send_wr);
  auto buf = testing::LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, {}, 1);
  auto r = DecodeWrite(buf, kRxe);
  REQUIRE(r.ok());
  FakeMemory out;
  out.Put(0x4000, Bytes(uint32_t{0}));
  CallOutcome o;
  o.ret = static_cast<int64_t>(buf.size());
  o.out = &out;
  CHECK(FormatWrite("uverbs0", *r, kRxe, &o) ==
        "write(uverbs0, POST_SEND{qp_handle=3 wr_count=0 sge_count=0 wqe_size=56}) = 32 "
        "{bad_wr=0}");
}

TEST_CASE("GIDs and socket addresses print as addresses", "[printer]") {
  rdma_ucm_bind bind{};
  bind.id = 4;
  bind.addr_size = 16;
  const uint8_t sin[16] = {2, 0, 0x4a, 0x38, 10, 99, 0, 2};  // AF_INET 10.99.0.2:19000
  std::memcpy(&bind.addr, sin, sizeof(sin));
  std::vector<std::byte> w(sizeof(rdma_ucm_cmd_hdr) + sizeof(bind));
  rdma_ucm_cmd_hdr h{RDMA_USER_CM_CMD_BIND, sizeof(bind), 0};
  std::memcpy(w.data(), &h, sizeof(h));
  std::memcpy(w.data() + sizeof(h), &bind, sizeof(bind));
  auto r = DecodeUcmaWrite(w);
  REQUIRE(r.ok());
  CHECK(FormatUcma("rdma_cm", *r, nullptr) ==
        "write(rdma_cm, BIND{id=4 addr_size=16 addr=10.99.0.2:19000})");

  // AF_INET6 (10), port 7790, flow info 0, link-local fe80::1, scope id (interface) 3; then
  // the same address with no scope.
  auto printed = [&](const uint8_t (&sin6)[28]) {
    bind.addr_size = sizeof(sin6);
    std::memcpy(&bind.addr, sin6, sizeof(sin6));
    std::memcpy(w.data() + sizeof(h), &bind, sizeof(bind));
    auto decoded = DecodeUcmaWrite(w);
    REQUIRE(decoded.ok());
    return FormatUcma("rdma_cm", *decoded, nullptr);
  };
  uint8_t sin6[28] = {10, 0, 0x1e, 0x6e};
  sin6[8] = 0xfe;
  sin6[9] = 0x80;
  sin6[23] = 1;
  sin6[24] = 3;
  CHECK(printed(sin6) == "write(rdma_cm, BIND{id=4 addr_size=28 addr=[fe80::1%3]:7790})");
  sin6[24] = 0;
  CHECK(printed(sin6) == "write(rdma_cm, BIND{id=4 addr_size=28 addr=[fe80::1]:7790})");
}

}  // namespace
}  // namespace rxp::abi
