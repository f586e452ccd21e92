#include "abi/mlx5_queue_sizes.h"

#include <algorithm>
#include <bit>
#include <climits>

#include "abi/write_decoder.h"

namespace rxp::abi::mlx5 {

namespace {

// A field of the driver request, 0 past its end: the create handlers copy min(inlen,
// sizeof(ucmd)) into a zeroed struct. (resize_user copies all of its struct whatever the
// length: ResizeCqBuf refuses a shorter request.)
#define RXP_DRIVER_FIELD(c, S, m) ReadField((c).driver_in, offsetof(S, m), sizeof(S::m))

// The CQE sizes the driver takes (create_cq_user: anything else is EINVAL before it pins;
// libmlx5 sends only these).
bool ValidCqeSize(uint64_t cqe_size) { return cqe_size == 64 || cqe_size == 128; }

// The kernel's roundup_pow_of_two(entries + 1) for an `int` count: a count past INT_MAX is
// negative there and refused (mlx5_ib_create_cq, mlx5_ib_resize_cq: entries < 0 / < 1).
uint64_t QueueEntries(uint32_t requested) {
  if (requested >= INT_MAX) return 0;
  return std::bit_ceil(uint64_t{requested} + 1);
}

// The QP's receive queue: rq_wqe_count << rq_wqe_shift (set_rq_size refuses a shift past 32;
// create_user_qp refuses counts that differ from the QP's, so no RQ means both are 0).
uint64_t RqBytes(const PayloadContext& c) {
  const uint64_t shift = RXP_DRIVER_FIELD(c, mlx5_ib_create_qp, rq_wqe_shift);
  if (shift > 32) return kPinSizeInvalid;
  return RXP_DRIVER_FIELD(c, mlx5_ib_create_qp, rq_wqe_count) << shift;
}

// set_user_buf_size keeps QP buffer sizes in an `int` (ubuffer.buf_size): the 6.1 and 6.12
// releases truncate a larger one, later stable kernels refuse it (check_shl/add_overflow).
// Either way it is not a length the proxy can vouch for.
uint64_t FitsInt(uint64_t bytes) { return bytes > INT_MAX ? kPinSizeInvalid : bytes; }

// MLX5_SEND_WQE_BB: each send WQE basic block is 64 bytes (set_user_buf_size: sq.wqe_cnt << 6).
constexpr unsigned kSendWqeShift = 6;

}  // namespace

// create_cq_user: ib_umem_get(buf_addr, entries * ucmd.cqe_size), entries rounded up from the
// core cqe; cqe_size is 64 or 128 for any CQ the kernel goes on to create.
uint64_t CreateCqBuf(const PayloadContext& c) {
  const uint64_t entries = QueueEntries(c.cqe);
  const uint64_t cqe_size = RXP_DRIVER_FIELD(c, mlx5_ib_create_cq, cqe_size);
  if (entries == 0 || !ValidCqeSize(cqe_size)) return kPinSizeInvalid;
  return entries * cqe_size;
}

// resize_user: ib_copy_from_udata(&ucmd, udata, sizeof(ucmd)) -- all 16 bytes, whatever the
// request holds (from an inline UHW_IN, the next attribute's header) -- then
// ib_umem_get(buf_addr, (size_t)ucmd.cqe_size * entries). cqe_size is not checked there; the
// proxy holds it to the sizes a CQ is created with, which is what libmlx5 sends.
uint64_t ResizeCqBuf(const PayloadContext& c) {
  const uint64_t entries = QueueEntries(c.cqe);
  const uint64_t cqe_size = RXP_DRIVER_FIELD(c, mlx5_ib_resize_cq, cqe_size);
  if (entries == 0 || c.driver_in.size() < sizeof(mlx5_ib_resize_cq) || !ValidCqeSize(cqe_size))
    return kPinSizeInvalid;
  return entries * cqe_size;
}

// set_user_buf_size: (rq.wqe_cnt << rq.wqe_shift) + (sq.wqe_cnt << 6); _create_user_qp pins
// it only when buf_addr and the size are non-zero.
uint64_t QpBuf(const PayloadContext& c) {
  const uint64_t rq = RqBytes(c);
  if (rq > INT_MAX) return kPinSizeInvalid;  // before the sum, which could wrap
  const uint64_t sq = RXP_DRIVER_FIELD(c, mlx5_ib_create_qp, sq_wqe_count) << kSendWqeShift;
  return FitsInt(rq + sq);
}

// Raw packet and IB_QP_CREATE_SOURCE_QPN QPs: buf_addr holds the RQ alone.
uint64_t RawQpRqBuf(const PayloadContext& c) {
  const uint64_t rq = RqBytes(c);
  return rq == kPinSizeInvalid ? rq : FitsInt(rq);
}

// create_raw_packet_qp_sq: sq_buf_addr is pinned (sq_wqe_count << 6 bytes) only when the QP
// has a send queue.
uint64_t RawQpSqBuf(const PayloadContext& c) {
  return FitsInt(RXP_DRIVER_FIELD(c, mlx5_ib_create_qp, sq_wqe_count) << kSendWqeShift);
}

uint32_t CqEntries(const PayloadContext& c) {
  return static_cast<uint32_t>(QueueEntries(c.cqe));  // at most 2^31
}

// set_user_rq_size: check_shl_overflow(rq_wqe_count, rq_wqe_shift, &buf_size) -> EINVAL.
uint64_t WqBuf(const PayloadContext& c) {
  const uint64_t count = RXP_DRIVER_FIELD(c, mlx5_ib_create_wq, rq_wqe_count);
  const uint64_t shift = RXP_DRIVER_FIELD(c, mlx5_ib_create_wq, rq_wqe_shift);
  if (shift >= 64 || (count != 0 && std::countl_zero(count) < static_cast<int>(shift)))
    return kPinSizeInvalid;
  return count << shift;
}

// mlx5_ib_create_srq: max = roundup_pow_of_two(max_wr + 1) WQEs of desc_size bytes, where
// desc_size = roundup_pow_of_two(16 + 16 * max_sge) and at least 32 (next segment and data
// segments, 16 bytes each); create_srq_user takes the product as an `int`.
uint64_t SrqBuf(const PayloadContext& c) {
  const uint64_t entries = QueueEntries(c.srq_max_wr);
  if (entries == 0 || c.srq_max_sge >= (1u << 26)) return kPinSizeInvalid;
  const uint64_t desc = std::max<uint64_t>(std::bit_ceil(16 + 16 * uint64_t{c.srq_max_sge}), 32);
  return FitsInt(entries * desc);
}

#undef RXP_DRIVER_FIELD

}  // namespace rxp::abi::mlx5
