// Strict decoder for write() on /dev/infiniband/rdma_cm (ucma_write in
// drivers/infiniband/core/ucma.c): the command header, the request body and the response
// pointer the kernel will write to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::abi {

struct UcmaRequest {
  const UcmaCommand* command = nullptr;
  rdma_ucm_cmd_hdr header{};
  std::span<const std::byte> body;  // the `in` bytes after the header
  uint64_t response = 0;            // where the kernel writes the response (0: none)
  uint32_t response_len = 0;        // `out`: the most it may write
};

Result<UcmaRequest> DecodeUcmaWrite(std::span<const std::byte> buf);

}  // namespace rxp::abi
