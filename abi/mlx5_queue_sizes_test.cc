// The lengths mlx5 pins at each queue buffer, as hw/mlx5/{cq,qp,srq}.c compute them; the
// figures are what rdma-core's libmlx5 allocates for the same requests (mlx5_create_cq,
// mlx5_calc_wq_size, mlx5_create_srq), so a real program's buffer is exactly covered.
#include "abi/mlx5_queue_sizes.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "abi/driver_payloads.h"

namespace rxp::abi {
namespace {

template <typename T>
struct Request {
  explicit Request(const T& ucmd) : bytes(sizeof(T)) {
    std::memcpy(bytes.data(), &ucmd, sizeof(T));
    context.driver_in = bytes;
  }
  std::vector<std::byte> bytes;
  PayloadContext context;
};

TEST_CASE("mlx5 CQ buffers: rounded-up entries times the CQE size", "[driver][mlx5]") {
  mlx5_ib_create_cq cq{};
  cq.cqe_size = 64;
  Request r(cq);
  r.context.cqe = 255;  // libmlx5 asks for 2^n - 1 entries: 256 of 64 bytes
  CHECK(mlx5::CreateCqBuf(r.context) == 256 * 64);
  r.context.cqe = 256;  // roundup_pow_of_two(257)
  CHECK(mlx5::CreateCqBuf(r.context) == 512 * 64);
  r.context.cqe = 0;
  CHECK(mlx5::CreateCqBuf(r.context) == 64);
  r.context.cqe = 0x80000000u;  // negative as the kernel's int: refused (entries < 0)
  CHECK(mlx5::CreateCqBuf(r.context) == kPinSizeInvalid);
  for (uint32_t size : {0u, 32u, 96u, 256u}) {  // create_cq_user: EINVAL before it pins
    cq.cqe_size = size;
    Request odd(cq);
    odd.context.cqe = 255;
    CHECK(mlx5::CreateCqBuf(odd.context) == kPinSizeInvalid);
  }
  cq.cqe_size = 128;
  Request r128(cq);
  r128.context.cqe = 4095;
  CHECK(mlx5::CreateCqBuf(r128.context) == 4096 * 128);

  // RESIZE_CQ to 1023 entries (1024 CQEs), the driver request cut to `request_bytes`.
  const auto resize_bytes = [](uint16_t cqe_size, size_t request_bytes) {
    mlx5_ib_resize_cq resize{};
    resize.cqe_size = cqe_size;
    Request req(resize);
    req.bytes.resize(request_bytes);
    req.context.driver_in = req.bytes;
    req.context.cqe = 1023;
    return mlx5::ResizeCqBuf(req.context);
  };
  CHECK(resize_bytes(64, sizeof(mlx5_ib_resize_cq)) == 1024 * 64);
  // resize_user does not check cqe_size; the proxy takes what creates take.
  CHECK(resize_bytes(0, sizeof(mlx5_ib_resize_cq)) == kPinSizeInvalid);
  // resize_user copies 16 bytes whatever the request holds: a shorter one would have the
  // kernel read cqe_size from whatever follows it.
  CHECK(resize_bytes(64, 8) == kPinSizeInvalid);
}

TEST_CASE("mlx5 QP buffers: the receive queue, then 64-byte send WQE blocks", "[driver][mlx5]") {
  mlx5_ib_create_qp qp{};
  qp.rq_wqe_count = 64;
  qp.rq_wqe_shift = 4;
  qp.sq_wqe_count = 128;
  Request r(qp);
  CHECK(mlx5::QpBuf(r.context) == 64 * 16 + 128 * 64);
  CHECK(mlx5::RawQpRqBuf(r.context) == 64 * 16);
  CHECK(mlx5::RawQpSqBuf(r.context) == 128 * 64);

  qp.rq_wqe_count = 0;  // SRQ-attached: no RQ, the buffer is the SQ
  qp.rq_wqe_shift = 0;
  Request sq_only(qp);
  CHECK(mlx5::QpBuf(sq_only.context) == 128 * 64);
  CHECK(mlx5::RawQpRqBuf(sq_only.context) == kPinsNothing);

  qp.sq_wqe_count = 0;  // neither queue: _create_user_qp pins no buffer
  Request none(qp);
  CHECK(mlx5::QpBuf(none.context) == kPinsNothing);
  CHECK(mlx5::RawQpSqBuf(none.context) == kPinsNothing);

  qp.rq_wqe_count = 1;
  qp.rq_wqe_shift = 33;  // set_rq_size: a shift past 32 is EINVAL
  Request shift(qp);
  CHECK(mlx5::QpBuf(shift.context) == kPinSizeInvalid);
  // Sizes past INT_MAX: set_user_buf_size keeps them in an int (truncated in 6.1 and 6.12).
  qp.rq_wqe_count = 1u << 20;
  qp.rq_wqe_shift = 11;
  Request big(qp);
  CHECK(mlx5::QpBuf(big.context) == kPinSizeInvalid);
  qp.rq_wqe_count = 0xffffffff;  // 2^64 - 2^32: with 2^32 of SQ the sum would wrap to 0
  qp.rq_wqe_shift = 32;
  qp.sq_wqe_count = 1u << 26;
  Request wrap(qp);
  CHECK(mlx5::QpBuf(wrap.context) == kPinSizeInvalid);
  qp.rq_wqe_count = 0;
  qp.rq_wqe_shift = 0;
  qp.sq_wqe_count = 1u << 26;  // << 6 is 2^32
  Request big_sq(qp);
  CHECK(mlx5::QpBuf(big_sq.context) == kPinSizeInvalid);
  CHECK(mlx5::RawQpSqBuf(big_sq.context) == kPinSizeInvalid);
}

TEST_CASE("mlx5 WQ and SRQ buffers", "[driver][mlx5]") {
  mlx5_ib_create_wq wq{};
  wq.rq_wqe_count = 256;
  wq.rq_wqe_shift = 6;
  Request w(wq);
  CHECK(mlx5::WqBuf(w.context) == 256 * 64);
  wq.rq_wqe_count = 1u << 31;
  wq.rq_wqe_shift = 33;  // check_shl_overflow into a size_t
  Request wo(wq);
  CHECK(mlx5::WqBuf(wo.context) == kPinSizeInvalid);

  mlx5_ib_create_srq srq{};
  Request s(srq);
  s.context.srq_max_wr = 1023;  // 1024 WQEs
  s.context.srq_max_sge = 1;    // 16 + 16 -> 32 bytes each
  CHECK(mlx5::SrqBuf(s.context) == 1024 * 32);
  s.context.srq_max_sge = 2;  // 48 -> 64
  CHECK(mlx5::SrqBuf(s.context) == 1024 * 64);
  s.context.srq_max_sge = 0;  // at least 32
  CHECK(mlx5::SrqBuf(s.context) == 1024 * 32);
  s.context.srq_max_wr = 1u << 20;  // 2^21 WQEs of 2 KiB: past create_srq_user's int
  s.context.srq_max_sge = 100;
  CHECK(mlx5::SrqBuf(s.context) == kPinSizeInvalid);
}

// Every mlx5 address the driver pins says how much: its own length or its page.
TEST_CASE("mlx5 queue buffer fields carry the driver's length", "[driver][mlx5]") {
  const DriverPayload* payloads[] = {&drivers::kMlx5CreateCq, &drivers::kMlx5ResizeCq,
                                     &drivers::kMlx5CreateSrq, &drivers::kMlx5CreateQp,
                                     &drivers::kMlx5CreateWq};
  int checked = 0;
  for (const DriverPayload* p : payloads) {
    std::vector<const Layout*> layouts(p->variants.begin(), p->variants.end());
    if (layouts.empty()) layouts.push_back(p->in);
    for (const Layout* l : layouts)
      for (const Field& f : l->fields)
        if (f.kind == FieldKind::kPinnedVa) {
          INFO(l->c_name << "." << f.name);
          CHECK((f.pin_length != nullptr) != f.pins_page);
          CHECK(f.pins_page == (f.name == "db_addr"));
          ++checked;
        }
  }
  CHECK(checked == 12);  // CQ 2, RESIZE_CQ 1, SRQ 2, QP 2 and raw-packet QP 3, WQ 2
}

}  // namespace
}  // namespace rxp::abi
