// How many bytes the mlx5 driver pins at each queue buffer address of a create request: the
// lengths it derives in the kernel from the driver request and the core sizes (entries times
// entry size). Sentry mode asks the embedder for exactly that range, so an app cannot make the
// host pin memory past its own. Each returns a length, kPinsNothing or kPinSizeInvalid
// (abi/schema.h); facts from hw/mlx5/{cq,qp,srq}.c of Linux 6.1 and 6.12, which agree.
#pragma once

#include "abi/schema.h"

namespace rxp::abi::mlx5 {

uint64_t CreateCqBuf(const PayloadContext& c);  // mlx5_ib_create_cq.buf_addr
uint64_t ResizeCqBuf(const PayloadContext& c);  // mlx5_ib_resize_cq.buf_addr
uint64_t QpBuf(const PayloadContext& c);        // mlx5_ib_create_qp.buf_addr: RQ then SQ
uint64_t RawQpRqBuf(const PayloadContext& c);   // .buf_addr of a raw packet / underlay QP: RQ
uint64_t RawQpSqBuf(const PayloadContext& c);   // .sq_buf_addr of the same: its SQ
uint64_t WqBuf(const PayloadContext& c);        // mlx5_ib_create_wq.buf_addr
uint64_t SrqBuf(const PayloadContext& c);       // mlx5_ib_create_srq.buf_addr

// The entries a CQ of `c.cqe` gets (roundup_pow_of_two(cqe + 1)); 0 for a count the driver
// refuses. A RESIZE_CQ to as many is one the driver answers without reading its request.
uint32_t CqEntries(const PayloadContext& c);

}  // namespace rxp::abi::mlx5
