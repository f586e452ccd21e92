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
  SECTION("response too short") {
    CHECK(Errno(ExWrite(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, 0x3000, 2)) == ENOSPC);
  }
  SECTION("truncated extended header") {
    CHECK(Errno({good.begin(), good.begin() + 16}) == EINVAL);
  }
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
