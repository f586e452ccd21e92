// Strict decoder for the legacy write() ABI on a uverbs fd: the command header(s), the split
// into core request and driver data, where the kernel will write the response, and the
// command's variable trailer -- validated as ib_uverbs_write() / verify_hdr() and the command
// handlers validate them. The same body checks serve INVOKE_WRITE's CORE_IN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::abi {

struct WriteRequest {
  const WriteCommand* command = nullptr;
  ib_uverbs_cmd_hdr header{};
  ib_uverbs_ex_cmd_hdr ex_header{};     // extended commands only
  std::span<const std::byte> core;      // the core request (non-ex: starts with `response`)
  std::span<const std::byte> driver;    // driver data (udata in)
  // Extended only: the core request is shorter than the struct the proxy knows. Its body is
  // not validated here; what is forwarded is PaddedExtendedWrite(), decoded (and so
  // validated) again.
  bool short_core = false;
  uint64_t response = 0;                // where the kernel writes the core response (0: none)
  uint32_t response_len = 0;            // bytes of core response the kernel may write
  uint64_t driver_response = 0;         // where the driver response goes (udata out)
  uint32_t driver_response_len = 0;
};

// Decodes the whole buffer of one write() (`count` bytes, as copied from the app).
Result<WriteRequest> DecodeWrite(std::span<const std::byte> buf, const DeviceAbi& device);

// An extended command's core request shorter than the struct the proxy knows (an older
// rdma-core's, or any caller's) is read by the kernel as if zero-extended (uverbs_request()):
// the same write with the core zero-extended to that struct and in_words raised to match, so
// that everything after decoding sees whole structs and the kernel reads the same values.
// nullopt when `r` needs no padding. `buf` is the buffer `r` was decoded from.
std::optional<std::vector<std::byte>> PaddedExtendedWrite(const WriteRequest& r,
                                                          std::span<const std::byte> buf);

// Validates a command's core request bytes the way its kernel handler reads them: size,
// zeroed bytes past the struct, and the variable trailer (POST_SEND WRs and SGEs, RWQ
// indirection table handles, flow specs). Used for write() and for INVOKE_WRITE's CORE_IN.
Result<void> ValidateWriteBody(const WriteCommand& command, std::span<const std::byte> core);

// Whether what the command's handler writes fits the response length the caller declared
// (out_words, or INVOKE_WRITE's CORE_OUT): POLL_CQ's handler (ib_uverbs_poll_cq) writes
// 8 + ne * 48 bytes -- one ib_uverbs_wc per completion it finds -- whatever that length says.
// Natively the excess lands in the caller's own memory; a proxy that bounces responses must
// not let it land past its bounce buffer, so such a request is EINVAL.
Result<void> ValidateWriteResponse(const WriteCommand& command, std::span<const std::byte> core,
                                   uint64_t response_len);

// The facts of a legacy QP creation that choose the driver request layout (mlx5 create_qp
// variants), from the core request (CREATE_QP, EX_CREATE_QP) and the driver request.
PayloadContext DriverContext(const WriteCommand& command, std::span<const std::byte> core,
                             std::span<const std::byte> driver_in);

// Reads a little-endian unsigned field of `size` bytes at `offset` (0 if out of range).
// Inline: the command path reads a handful of fields per command.
inline uint64_t ReadField(std::span<const std::byte> bytes, size_t offset, size_t size) {
  uint64_t v = 0;
  if (size > sizeof(v) || offset > bytes.size() || size > bytes.size() - offset) return 0;
  std::memcpy(&v, bytes.data() + offset, size);
  return v;
}

}  // namespace rxp::abi
