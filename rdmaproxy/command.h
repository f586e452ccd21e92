// A command between its two phases: what BeginIoctl / BeginWrite decided and built, and what
// Complete needs to settle it. Embedders treat it as opaque except for the forward image.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abi/ioctl_decoder.h"
#include "abi/schema.h"
#include "abi/write_decoder.h"
#include "rdmaproxy/embedder.h"
#include "rdmaproxy/forward_image.h"

namespace rxp::proxy {

// Where bytes the kernel writes end up: in the forward image (sentry mode bounces them) or
// directly in the app (the app issues the syscall on its own output buffers).
struct Place {
  bool in_image = false;
  uint64_t where = 0;   // image offset, or app address
  uint32_t length = 0;
};

// A buffer the kernel fills that must be copied back to the app (sentry mode).
struct OutputCopy {
  size_t image_offset = 0;
  uint64_t app_address = 0;
  uint32_t length = 0;
  int attr_index = -1;  // ioctl PTR_OUT: copied only if the kernel set VALID_OUTPUT
};

// A u32 the kernel writes that names something the proxy must act on: a new object's handle,
// a new fd, an rxe mmap cookie, an mmap entry offset handed out with a new object (mlx5 UAR,
// VAR).
struct Produced {
  enum class What { kHandle, kFd, kRxeMmapInfo, kMmapEntry };
  What what = What::kHandle;
  // Where: an ioctl attribute's data word (attr_index >= 0), or `place` + `offset`.
  int attr_index = -1;
  Place place;
  uint32_t offset = 0;
  FileKind fd_kind = FileKind::kOther;  // kFd
  Place length_place;                   // kMmapEntry: where the kernel writes the entry's length
};

class UverbsCommand {
 public:
  enum class Kind { kIoctl, kWrite } kind = Kind::kIoctl;
  uint64_t app_arg = 0;        // the ioctl argument / write buffer in the app
  uint64_t app_length = 0;     // write: count
  ForwardImage image;          // what the kernel reads (relocate before use)
  bool identity = true;        // the app runs the syscall itself (ptrace harness)
  // UverbsFile::IoctlAsForwarder: the command is being built for the forwarder to issue, and
  // (set while building) it turned out to need something only the app's own syscall has.
  bool as_forwarder = false;
  bool needs_app = false;

  // ioctl
  abi::IoctlRequest request;
  std::vector<std::byte> raw;  // header + attributes as the app sent them
  std::vector<int> image_attr;  // app attribute index -> attribute index in the image (-1: dropped)
  size_t image_attrs_at = sizeof(abi::IoctlHeader);
  // write
  std::optional<abi::WriteRequest> write;
  std::vector<std::byte> write_raw;
  size_t write_core_at = 0;  // image offset of the core request (after ib_uverbs_cmd_hdr)

  // What to settle after the call.
  std::vector<OutputCopy> outputs;
  std::vector<Produced> produced;
  abi::ObjectId creates = abi::kNoObject;
  std::optional<uint32_t> destroys;
  uint64_t destroys_serial = 0;    // the serial of the object `destroys` named when begun
  uint64_t pinned = 0;             // bytes reserved: a new MR, a driver's queue buffers
  bool on_demand = false;          // REG_MR / REREG_MR: the MR's flags hold ON_DEMAND after it
  bool reserved = false;           // Reserve() was taken for `creates`
  std::optional<uint32_t> rereg;   // REREG_MR (TRANS or ACCESS), RESIZE_CQ: the object's handle
  uint64_t rereg_serial = 0;       // the serial of the object `rereg` named when begun
  bool rereg_keeps_range = false;  // REREG_MR with ACCESS, no TRANS: only on_demand changes
  uint64_t busy_serial = 0;        // the object Reserve marked busy (destroyed or rereg'd)
  uint32_t queue_entries = 0;      // CQ creation / RESIZE_CQ with a driver-pinned buffer
  uint64_t doorbell_page = 0;      // the host page of a new queue's doorbell record (mlx5)
  bool doorbell_held = false;      // Reserve() counted the command among its page's holders
  bool creates_context = false;
  // For logs: "QP.CREATE", "INVOKE_WRITE REG_MR", "POST_SEND". Static storage (the schema's
  // names), so naming a command costs no string copy.
  std::string_view short_name;

  // --trace: the request half of the line, and what the printer needs for the result half.
  std::string trace_request;

  // Back to a fresh command, keeping every buffer's capacity: sentry mode reuses one command
  // per file, so the steady state allocates nothing. `raw` and `write_raw` keep their bytes:
  // Begin overwrites them whole, sizing them to what it copies in, and a command of the same
  // size as the last (the usual case) then re-zeroes nothing.
  void Reset() {
    kind = Kind::kIoctl;
    app_arg = 0;
    app_length = 0;
    image.Clear();
    identity = true;
    as_forwarder = false;
    needs_app = false;
    request.method = nullptr;
    request.write_command = nullptr;
    request.num_attrs = 0;
    request.num_dropped = 0;
    image_attr.clear();
    image_attrs_at = sizeof(abi::IoctlHeader);
    write.reset();
    write_core_at = 0;
    outputs.clear();
    produced.clear();
    creates = abi::kNoObject;
    destroys.reset();
    destroys_serial = 0;
    pinned = 0;
    on_demand = false;
    reserved = false;
    rereg.reset();
    rereg_serial = 0;
    rereg_keeps_range = false;
    busy_serial = 0;
    queue_entries = 0;
    doorbell_page = 0;
    doorbell_held = false;
    creates_context = false;
    short_name = {};
    trace_request.clear();
  }
};

}  // namespace rxp::proxy
