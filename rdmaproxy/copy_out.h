// Where a command's results go back to the app, and what happens when the app's memory there
// cannot take them.
//
// The kernel writes results with put_user()/copy_to_user(), which fail on a read-only or
// unmapped page; the command then fails with EFAULT, and a command that made an object fails
// with the object unmade:
//   - a new object's id goes into the app's attribute array before the handler runs
//     (uverbs_process_attr: put_user(id, &user_attrs[i].data));
//   - an output's VALID_OUTPUT flag goes there after it (uverbs_copy_to -> uverbs_set_output);
//   - a legacy create undoes itself when its response cannot be copied (ib_uverbs_alloc_pd's
//     err_copy, through uverbs_response), as rdma_cm's do (ucma_create_id's err1, and
//     ucma_get_event leaves the event queued).
// The proxy forwards a copy of the command and writes the results back itself, so a failing
// write-back would leave an object the app was told does not exist. For a command that makes
// one, the engine therefore checks the app's side before forwarding (EFAULT, nothing
// forwarded: what the app sees natively); for any other, a failed write-back after the kernel
// answered fails the command with EFAULT, as the kernel's own copy does after the handler ran.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "abi/ioctl_decoder.h"
#include "abi/result.h"
#include "rdmaproxy/command.h"
#include "rdmaproxy/embedder.h"
#include "rdmaproxy/forward_image.h"

namespace rxp::proxy {

// The app can take `length` bytes at `address`: they are read and the same bytes written
// back, so a read-only or unmapped byte fails (EFAULT, with the embedder's reason).
Result<void> ProbeWritable(AppMemory& memory, uint64_t address, size_t length);

// An ioctl's attribute array at `app_arg` (whose copy is `raw`): the span of entries the
// kernel writes back -- a NEW object's id, an output's flags -- must be writable.
Result<void> CheckAttrWriteBack(const abi::IoctlRequest& request, uint64_t app_arg,
                                std::span<const std::byte> raw, AppMemory& memory,
                                std::string_view command);

// Room in `image` for `room` bytes of an output the kernel writes (sentry mode), starting as
// the app's own `length` bytes at `address`; returns its offset. Natively the kernel writes
// only its own struct into an output (uverbs_copy_to, ib_copy_to_udata) and the bytes of a
// longer buffer past it stay the app's; the whole bounce goes back, so it must hold them.
// A buffer that cannot be read whole starts as zeros and its write-back fails with EFAULT,
// also where it only runs into an unmapped page past what the kernel writes (natively a
// success): a deliberate simplification, since where the kernel's struct ends is the
// driver's to say. A command that makes an object is refused before forwarding then
// (CheckOutputsWritable probes the whole buffer), so nothing the kernel made is lost.
size_t ReserveOutput(ForwardImage& image, size_t room, AppMemory& memory, uint64_t address,
                     size_t length);

// Reads as much of the app's `out.size()` bytes at `address` as is readable from its start, a
// page at a time once the whole cannot be read (a buffer that runs into an unmapped page);
// the rest of `out` is zeros. Returns how many bytes were read.
size_t ReadReadablePrefix(AppMemory& memory, uint64_t address, std::span<std::byte> out);

// Each bounced output (sentry mode) must be writable where the app reads it.
Result<void> CheckOutputsWritable(std::span<const OutputCopy> outputs, AppMemory& memory,
                                  std::string_view command);

}  // namespace rxp::proxy
