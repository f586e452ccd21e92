#include "abi/write_decoder.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstring>

#include "abi/testing/request_builder.h"
#include "abi/ucma_decoder.h"

namespace rxp::abi {
namespace {

using testing::Bytes;
using testing::ExWrite;
using testing::LegacyWrite;

const DeviceAbi kRxe = DeviceAbiFor(RDMA_DRIVER_RXE);

int Errno(const std::vector<std::byte>& buf) {
  auto r = DecodeWrite(buf, kRxe);
  return r.ok() ? 0 : r.error().errnum;
}

ib_uverbs_reg_mr RegMr() {
  ib_uverbs_reg_mr c{};
  c.response = 0x7ffe0000;
  c.start = 0x7f0000001000;
  c.length = 8192;
  c.hca_va = 0x7f0000001000;
  c.pd_handle = 1;
  c.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE;
  return c;
}

TEST_CASE("legacy REG_MR: core, response pointer and sizes", "[write]") {
  auto buf = LegacyWrite(IB_USER_VERBS_CMD_REG_MR, RegMr(), {}, 3);
  auto r = DecodeWrite(buf, kRxe);
  REQUIRE(r.ok());
  CHECK(r->command->short_name == "REG_MR");
  CHECK(r->core.size() == sizeof(ib_uverbs_reg_mr));
  CHECK(r->driver.empty());
  CHECK(r->response == 0x7ffe0000);
  CHECK(r->response_len == sizeof(ib_uverbs_reg_mr_resp));
  CHECK(r->driver_response == 0);
}

TEST_CASE("legacy framing errors match verify_hdr()", "[write]") {
  auto buf = LegacyWrite(IB_USER_VERBS_CMD_REG_MR, RegMr(), {}, 3);
  SECTION("shorter than a header") { CHECK(Errno({buf.begin(), buf.begin() + 4}) == EINVAL); }
  SECTION("in_words that lie") {
    buf[4] = std::byte{11};  // in_words = 11 (44 bytes) for a 48-byte write
    CHECK(Errno(buf) == EINVAL);
  }
  SECTION("request too short for the command") {
    std::vector<std::byte> cut(buf.begin(), buf.end() - 8);
    cut[4] = std::byte{static_cast<uint8_t>(cut.size() / 4)};
    CHECK(Errno(cut) == ENOSPC);
  }
  SECTION("response too short") {
    buf[6] = std::byte{2};  // out_words = 2: 8 bytes for a 12-byte response
    CHECK(Errno(buf) == ENOSPC);
  }
  SECTION("unknown bits, unknown and unimplemented commands") {
    buf[1] = std::byte{1};  // command 0x109
    CHECK(Errno(buf) == EINVAL);
    CHECK(Errno(LegacyWrite(63u, RegMr())) == EOPNOTSUPP);
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_MODIFY_AH, RegMr())) == EOPNOTSUPP);
  }
}

TEST_CASE("driver data follows the core struct of udata commands", "[write]") {
  ib_uverbs_create_cq c{};
  c.response = 0x1000;
  c.cqe = 64;
  c.comp_channel = -1;
  const std::vector<std::byte> driver(32, std::byte{0});
  auto buf = LegacyWrite(IB_USER_VERBS_CMD_CREATE_CQ, c, driver,
                         (sizeof(ib_uverbs_create_cq_resp) + sizeof(rxe_create_cq_resp)) / 4);
  auto r = DecodeWrite(buf, kRxe);
  REQUIRE(r.ok());
  CHECK(r->core.size() == sizeof(ib_uverbs_create_cq));
  CHECK(r->driver.size() == 32);
  CHECK(r->response_len == sizeof(ib_uverbs_create_cq_resp));
  CHECK(r->driver_response == 0x1000 + sizeof(ib_uverbs_create_cq_resp));
  CHECK(r->driver_response_len == sizeof(rxe_create_cq_resp));
}

ib_uverbs_post_send Doorbell() {
  ib_uverbs_post_send p{};
  p.response = 0x2000;
  p.qp_handle = 3;
  p.wr_count = 0;
  p.sge_count = 0;
  p.wqe_size = sizeof(ib_uverbs_send_wr);
  return p;
}

TEST_CASE("POST_SEND: the rxe doorbell and its malformed variants", "[write]") {
  REQUIRE(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, Doorbell(), {}, 1)) == 0);
  SECTION("WR count that overflows the buffer") {
    auto p = Doorbell();
    p.wr_count = 0x40000000;
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, {}, 1)) == ENOSPC);
  }
  SECTION("SGE count that overflows") {
    auto p = Doorbell();
    p.sge_count = 0xffffffff;
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, {}, 1)) == ENOSPC);
  }
  SECTION("junk after the SGEs") {
    std::vector<std::byte> junk(8, std::byte{0x5a});
    auto buf = LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, Doorbell(), junk, 1);
    CHECK(Errno(buf) == EOPNOTSUPP);
  }
  SECTION("WQE smaller than a WR") {
    auto p = Doorbell();
    p.wqe_size = 8;
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, {}, 1)) == EINVAL);
  }
  SECTION("a WR that uses more SGEs than provided") {
    auto p = Doorbell();
    p.wr_count = 1;
    p.sge_count = 1;
    ib_uverbs_send_wr wr{};
    wr.num_sge = 2;
    auto tail = Bytes(wr);
    auto sge = Bytes(ib_uverbs_sge{});
    tail.insert(tail.end(), sge.begin(), sge.end());
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, tail, 1)) == EINVAL);
    wr.num_sge = 1;
    tail = Bytes(wr);
    tail.insert(tail.end(), sge.begin(), sge.end());
    CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_POST_SEND, p, tail, 1)) == 0);
  }
}

TEST_CASE("extended commands: words, reserved header, response rules", "[write]") {
  ib_uverbs_ex_query_device q{};
  auto good = ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, 0x3000,
                      sizeof(ib_uverbs_ex_query_device_resp) / 8);
  auto r = DecodeWrite(good, kRxe);
  REQUIRE(r.ok());
  CHECK(r->response == 0x3000);
  CHECK(r->response_len == sizeof(ib_uverbs_ex_query_device_resp));
  SECTION("provider words that lie") {
    auto buf = good;
    buf[8 + 8] = std::byte{2};  // provider_in_words = 2 with no driver data
    CHECK(Errno(buf) == EINVAL);
  }
  SECTION("reserved ex header") {
    auto buf = good;
    buf[8 + 12] = std::byte{1};
    CHECK(Errno(buf) == EINVAL);
  }
  SECTION("response pointer without response words") {
    CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, 0x3000, 0)) == EINVAL);
  }
  SECTION("response words without a pointer") {
    CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, 0, 38)) == EINVAL);
  }
  SECTION("a short response is the kernel's to truncate (no resp_size for extended methods)") {
    auto shorter = DecodeWrite(ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, 0x3000, 2), kRxe);
    REQUIRE(shorter.ok());
    CHECK(shorter->response_len == 16);
  }
  SECTION("truncated extended header") {
    CHECK(Errno({good.begin(), good.begin() + 16}) == EINVAL);
  }
}

// uapi_create_write() gives extended methods no req_size: uverbs_request() zero-fills a short
// request. PaddedExtendedWrite is that request, whole, with the driver data after it.
TEST_CASE("extended commands: a short core request is accepted and padded as the kernel reads "
          "it", "[write]") {
  const uint64_t user_handle = 0x55;
  const std::vector<std::byte> driver = Bytes(uint64_t{0xabcdef});
  const auto buf = ExWrite(IB_USER_VERBS_EX_CMD_CREATE_CQ, user_handle, 0x3000, 2, driver);
  auto r = DecodeWrite(buf, kRxe);
  REQUIRE(r.ok());
  CHECK(r->core.size() == 8);
  auto padded = PaddedExtendedWrite(*r, buf);
  REQUIRE(padded.has_value());
  CHECK(padded->size() == 8 + 16 + sizeof(ib_uverbs_ex_create_cq) + 8);
  auto p = DecodeWrite(*padded, kRxe);
  REQUIRE(p.ok());
  CHECK(p->header.in_words == sizeof(ib_uverbs_ex_create_cq) / 8);
  CHECK(p->core.size() == sizeof(ib_uverbs_ex_create_cq));
  CHECK(ReadField(p->core, 0, 8) == 0x55);
  for (size_t i = 8; i < p->core.size(); ++i) CHECK(p->core[i] == std::byte{0});
  CHECK(ReadField(p->driver, 0, 8) == 0xabcdef);
  CHECK(p->response == 0x3000);
  CHECK(p->response_len == 16);
  CHECK_FALSE(PaddedExtendedWrite(*p, *padded).has_value());  // whole already
  // No core at all is a request of zeros.
  auto empty = ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, uint64_t{0}, 0x3000, 2);
  empty.resize(empty.size() - 8);
  empty[4] = std::byte{0};  // in_words
  auto none = DecodeWrite(empty, kRxe);
  REQUIRE(none.ok());
  CHECK(none->core.empty());
  CHECK(none->short_core);
  // Legacy commands keep their sizes (verify_hdr: ENOSPC).
  CHECK_FALSE(PaddedExtendedWrite(DecodeWrite(LegacyWrite(IB_USER_VERBS_CMD_REG_MR, RegMr(), {},
                                                          sizeof(ib_uverbs_reg_mr_resp) / 4),
                                              kRxe).value(),
                                  {}).has_value());
}

// The errno ValidateWriteBody gives a legacy command's core bytes (INVOKE_WRITE's CORE_IN).
int BodyErrno(uint32_t command, const std::vector<std::byte>& core) {
  const WriteCommand* c = FindWriteCommand(command);
  REQUIRE(c != nullptr);
  auto r = ValidateWriteBody(*c, core);
  return r.ok() ? 0 : r.error().errnum;
}

// Bytes of `value` followed by `extra`.
template <typename T>
std::vector<std::byte> Then(const T& value, const std::vector<std::byte>& extra) {
  std::vector<std::byte> b(sizeof(T) + extra.size());
  std::memcpy(b.data(), &value, sizeof(T));
  if (!extra.empty()) std::memcpy(b.data() + sizeof(T), extra.data(), extra.size());
  return b;
}

constexpr uint32_t kExRwqIndTbl =
    IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL;

TEST_CASE("EX_CREATE_RWQ_IND_TBL: exactly 1 << log_ind_tbl_size handles, as the kernel reads them",
          "[write]") {
  // ib_uverbs_ex_create_rwq_ind_table {comp_mask, log_ind_tbl_size} + u32 wq_handles[].
  struct Req {
    uint32_t comp_mask;
    uint32_t log_ind_tbl_size;
    uint32_t handles[4];
  } req{};
  static_assert(offsetof(Req, handles) == sizeof(ib_uverbs_ex_create_rwq_ind_table));
  req.log_ind_tbl_size = 2;  // 4 handles
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, req, 0x1000, 2)) == 0);
  // uverbs_request_next(): 8 handles, only 4 present.
  req.log_ind_tbl_size = 3;
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, req, 0x1000, 2)) == ENOSPC);
  req.log_ind_tbl_size = 30;
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, req, 0x1000, 2)) == EINVAL);
  req.log_ind_tbl_size = 2;
  req.comp_mask = 1;
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, req, 0x1000, 2)) == EOPNOTSUPP);

  // One handle: the kernel reads 4 bytes of handles and no pad. INVOKE_WRITE's CORE_IN may end
  // right after it; a write() fills its last 8-byte word with zeros, which the kernel accepts
  // (uverbs_request_finish) -- and refuses with EOPNOTSUPP when they are not zeros.
  ib_uverbs_ex_create_rwq_ind_table one{};
  const std::vector<std::byte> handle{std::byte{7}, std::byte{0}, std::byte{0}, std::byte{0}};
  CHECK(BodyErrno(kExRwqIndTbl, Then(one, handle)) == 0);
  CHECK(BodyErrno(kExRwqIndTbl, Then(one, {handle.begin(), handle.begin() + 3})) == ENOSPC);
  CHECK(BodyErrno(kExRwqIndTbl, Bytes(one)) == ENOSPC);
  auto padded = Then(one, handle);
  padded.resize(padded.size() + 4);
  CHECK(BodyErrno(kExRwqIndTbl, padded) == 0);
  padded.back() = std::byte{1};
  CHECK(BodyErrno(kExRwqIndTbl, padded) == EOPNOTSUPP);
  // The same through write(): in_words counts whole 8-byte words.
  std::array<std::byte, sizeof(one) + 8> write_one{};
  std::memcpy(write_one.data(), &one, sizeof(one));
  write_one[sizeof(one)] = std::byte{7};
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, write_one, 0x1000, 2)) == 0);
}

constexpr uint32_t kExCreateFlow =
    IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_FLOW;

// ib_uverbs_create_flow with one ETH spec, as ibv_create_flow lays it out. The struct ends in a
// flexible array, so the two parts are kept apart and joined as bytes.
ib_uverbs_create_flow EthFlowCmd() {
  ib_uverbs_create_flow c{};
  c.qp_handle = 1;
  c.flow_attr.size = sizeof(ib_uverbs_flow_spec_eth);
  c.flow_attr.num_of_specs = 1;
  c.flow_attr.port = 1;
  return c;
}
ib_uverbs_flow_spec_eth EthSpec() {
  ib_uverbs_flow_spec_eth e{};
  e.type = 0x20;  // IB_FLOW_SPEC_ETH
  e.size = sizeof(ib_uverbs_flow_spec_eth);
  e.val.ether_type = 0x0008;
  e.mask.ether_type = 0xffff;
  return e;
}

TEST_CASE("EX_CREATE_FLOW: flow_attr and spec sizes refused with the kernel's errno", "[write]") {
  auto cmd = EthFlowCmd();
  auto eth = EthSpec();
  const auto body = [&](size_t cut = 0) {
    auto b = Then(cmd, Bytes(eth));
    b.resize(b.size() - cut);
    return BodyErrno(kExCreateFlow, b);
  };
  REQUIRE(body() == 0);
  std::array<std::byte, sizeof(ib_uverbs_create_flow) + sizeof(ib_uverbs_flow_spec_eth)> wire;
  std::memcpy(wire.data(), Then(cmd, Bytes(eth)).data(), wire.size());
  CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_CREATE_FLOW, wire, 0x1000, 1)) == 0);

  SECTION("specs shorter than flow_attr.size: uverbs_request_next() says ENOSPC") {
    CHECK(body(8) == ENOSPC);
    CHECK(body(sizeof(ib_uverbs_flow_spec_eth)) == ENOSPC);
  }
  SECTION("non-zero bytes after the specs: uverbs_request_finish() says EOPNOTSUPP") {
    auto b = Then(cmd, Bytes(eth));
    b.resize(b.size() + 8);
    CHECK(BodyErrno(kExCreateFlow, b) == 0);
    b.back() = std::byte{1};
    CHECK(BodyErrno(kExCreateFlow, b) == EOPNOTSUPP);
  }
  SECTION("flow_attr checks before the specs are read: EINVAL") {
    cmd.comp_mask = 1;
    CHECK(body(8) == EINVAL);  // comp_mask is checked first, even with specs missing
    cmd = EthFlowCmd();
    cmd.flow_attr.flags = 1u << 3;  // IB_FLOW_ATTR_FLAGS_RESERVED
    CHECK(body() == EINVAL);
    cmd = EthFlowCmd();
    cmd.flow_attr.flags = 1u << 1;  // DONT_TRAP on an ALL_DEFAULT rule
    cmd.flow_attr.type = 1;
    CHECK(body() == EINVAL);
    cmd.flow_attr.type = 0;
    CHECK(body() == 0);
    cmd = EthFlowCmd();
    cmd.flow_attr.num_of_specs = 11;  // > IB_FLOW_SPEC_SUPPORT_LAYERS
    CHECK(body() == EINVAL);
    cmd = EthFlowCmd();
    cmd.flow_attr.size = 0x1000;  // more than one spec of sizeof(ib_uverbs_flow_spec)
    CHECK(body() == EINVAL);
    cmd = EthFlowCmd();
    cmd.flow_attr.reserved[1] = 1;
    CHECK(body() == EINVAL);
  }
  SECTION("specs as kern_spec_to_ib_spec() sizes them") {
    cmd.flow_attr.num_of_specs = 2;  // one spec's bytes for two specs
    CHECK(body() == EINVAL);
    cmd = EthFlowCmd();
    eth.size = sizeof(ib_uverbs_flow_spec_eth) - 8;  // bytes left over after the spec
    CHECK(body() == EINVAL);
    eth = EthSpec();
    eth.reserved = 1;
    CHECK(body() == EINVAL);
    eth = EthSpec();
    eth.type = 0x22;  // IB_FLOW_SPEC_IB: no filter the kernel knows
    CHECK(body() == EINVAL);
    eth.type = 0x150;  // IB_FLOW_SPEC_INNER | IB_FLOW_SPEC_VXLAN_TUNNEL
    CHECK(body() == EINVAL);
    eth.type = 0x120;  // inner ETH
    CHECK(body() == 0);
  }
  SECTION("filters: 4-byte aligned, not empty, unknown mask bytes zero") {
    // An ETH spec with a 20-byte filter: 4 bytes more than the kernel's ib_flow_eth_filter.
    ib_uverbs_create_flow c{};
    ib_uverbs_flow_spec_hdr h{0x20, 8 + 2 * 20, 0};
    c.flow_attr.num_of_specs = 1;
    c.flow_attr.size = h.size;
    std::vector<std::byte> filter(2 * 20);  // value, then mask
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(h, filter))) == 0);
    filter[18] = std::byte{1};  // only the mask's extra bytes are checked
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(h, filter))) == 0);
    filter[20 + 18] = std::byte{1};
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(h, filter))) == EINVAL);
    // A 6-byte filter (hdr + 12 bytes) is not 4-byte aligned; an empty one is refused.
    h.size = 8 + 12;
    c.flow_attr.size = h.size;
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(h, std::vector<std::byte>(12)))) == EINVAL);
    h.size = 8;
    c.flow_attr.size = 8;
    CHECK(BodyErrno(kExCreateFlow, Then(c, Bytes(h))) == EINVAL);
  }
  SECTION("actions: exact sizes, EOPNOTSUPP for a flow action handle") {
    ib_uverbs_create_flow c{};
    ib_uverbs_flow_spec_action_handle a{};
    const std::vector<std::byte> zeros(8);
    c.flow_attr.num_of_specs = 1;
    c.flow_attr.size = sizeof(a);
    a.type = 0x1002;  // IB_FLOW_SPEC_ACTION_HANDLE
    a.size = sizeof(a);
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(a, zeros))) == 0);
    c.flow_attr.size = sizeof(a) + 8;
    a.size = sizeof(a) + 8;
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(a, zeros))) == EOPNOTSUPP);
    a.type = 0x1003;  // IB_FLOW_SPEC_ACTION_COUNT of the wrong size
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(a, zeros))) == EINVAL);
    a.type = 0x1004;  // no such action
    CHECK(BodyErrno(kExCreateFlow, Then(c, Then(a, zeros))) == EINVAL);
  }
}

TEST_CASE("core bytes past the struct must be zero", "[write]") {
  ib_uverbs_modify_qp m{};
  std::vector<std::byte> extra(8, std::byte{1});
  CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_MODIFY_QP, m, extra)) == EOPNOTSUPP);
  std::vector<std::byte> zeros(8, std::byte{0});
  CHECK(Errno(LegacyWrite(IB_USER_VERBS_CMD_MODIFY_QP, m, zeros)) == 0);
}

std::vector<std::byte> Ucma(uint32_t cmd, const std::vector<std::byte>& body, uint16_t out) {
  std::vector<std::byte> buf(sizeof(rdma_ucm_cmd_hdr) + body.size());
  rdma_ucm_cmd_hdr h{cmd, static_cast<uint16_t>(body.size()), out};
  std::memcpy(buf.data(), &h, sizeof(h));
  std::memcpy(buf.data() + sizeof(h), body.data(), body.size());
  return buf;
}

TEST_CASE("rdma_cm commands", "[ucma]") {
  rdma_ucm_create_id create{};
  create.uid = 0x1234;
  create.response = 0x5000;
  create.ps = RDMA_PS_TCP;
  auto r = DecodeUcmaWrite(Ucma(RDMA_USER_CM_CMD_CREATE_ID, Bytes(create), 4));
  REQUIRE(r.ok());
  CHECK(r->response == 0x5000);
  CHECK(r->command->short_name == "CREATE_ID");

  auto err = [](const std::vector<std::byte>& b) {
    auto res = DecodeUcmaWrite(b);
    return res.ok() ? 0 : res.error().errnum;
  };
  CHECK(err(Ucma(RDMA_USER_CM_CMD_CREATE_ID, Bytes(create), 2)) == ENOSPC);
  CHECK(err(Ucma(99, Bytes(create), 4)) == EINVAL);
  CHECK(err(Ucma(RDMA_USER_CM_CMD_GET_OPTION, Bytes(create), 4)) == ENOSYS);
  auto lying = Ucma(RDMA_USER_CM_CMD_CREATE_ID, Bytes(create), 4);
  lying[4] = std::byte{200};  // in = 200 > the 24 bytes present
  CHECK(err(lying) == EINVAL);
  auto cut = Ucma(RDMA_USER_CM_CMD_CREATE_ID, std::vector<std::byte>(8), 4);
  CHECK(err(cut) == EINVAL);
  CHECK(err({cut.begin(), cut.begin() + 3}) == EINVAL);
}

}  // namespace
}  // namespace rxp::abi
