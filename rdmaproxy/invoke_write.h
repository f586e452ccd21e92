// A legacy write() command re-expressed as the INVOKE_WRITE ioctl that runs the same kernel
// handler, for the forwarder (the ptrace harness's tracer) to issue on its own descriptor of
// the program's file: ib_uverbs_write() refuses a writer whose credentials are not the
// opener's (ib_safe_file_access), ib_uverbs_ioctl() does not. Used for the one legacy command
// a modern rdma-core still writes on every data-path call: the rxe / siw send doorbell.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "rdmaproxy/forward_image.h"

namespace rxp::proxy {

// Whether `buffer` (the first bytes of a write() on a uverbs file, at least the header and the
// core request) is the send doorbell rxe's and siw's providers write after queueing work
// requests in the mapped send queue (post_send_db() in rdma-core's providers/rxe/rxe.c): a
// POST_SEND with no work requests and no SGEs, a response buffer, and no driver data. The
// engine decides again on its own copy of the whole command.
bool IsSendDoorbell(std::span<const std::byte> buffer);

// Where the pieces of a built legacy command lie in its forward image.
struct InvokeWriteParts {
  uint32_t command = 0;     // IB_USER_VERBS_CMD_*
  uint32_t driver_id = 0;   // the device's enum rdma_driver_id (the ioctl header names it)
  size_t core_at = 0;       // the core request, after the ib_uverbs_cmd_hdr
  size_t core_len = 0;
  size_t response_at = 0;   // the response bounce buffer
  size_t response_len = 0;
};

// Appends to `image` the INVOKE_WRITE ioctl (UVERBS_HANDLER(UVERBS_METHOD_INVOKE_WRITE),
// uverbs_std_types_device.c) for `parts`, laid out as rdma-core's execute_write_bufs() lays it
// out: WRITE_CMD inline, CORE_IN pointing at the core request (inline when 8 bytes or less, as
// uverbs_attr_ptr_is_inline() reads it), CORE_OUT at the response bounce buffer. Returns the
// ioctl's offset in the image; its pointers are set when the image is relocated.
size_t AppendInvokeWrite(ForwardImage& image, const InvokeWriteParts& parts);

}  // namespace rxp::proxy
