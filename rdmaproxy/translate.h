// Translating the fields of a request inside its forward image: pinned addresses through
// AppMemory::HostAddress, fds through a resolver, and (sentry mode) pointers the kernel writes
// into, redirected to bounce buffers. Shared by uverbs and rdma_cm files; the schema's field
// kinds (abi::FieldKind) say what each field is.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "abi/payload.h"
#include "abi/result.h"
#include "abi/schema.h"
#include "rdmaproxy/command.h"
#include "rdmaproxy/embedder.h"

namespace rxp::proxy {

struct TranslateContext {
  ForwardImage& image;
  std::vector<OutputCopy>& outputs;
  std::vector<Produced>& produced;
  AppMemory& memory;
  bool identity = true;  // the app runs the syscall: its addresses and fds are the kernel's
  bool pin = true;       // false: kPinnedVa fields are not used by this request (REREG_MR)
  std::string_view what;  // for error reasons: "INVOKE_WRITE REG_MR"
  // Maps an app fd found in `field` to the fd the kernel must see.
  std::function<Result<int>(const abi::Field& field, int app_fd)> resolve_fd;
  // Driver requests: what Field::pin_length sizes a queue buffer from (nullptr elsewhere),
  // and the image offset of the driver request its driver_in views.
  const abi::PayloadContext* payload = nullptr;
  size_t payload_at = 0;
  // Out: the bytes of driver queue buffers the request pins (for the pinned-memory budget),
  // and the host page of its doorbell record (mlx5_ib_db_map_user pins that page once per
  // context, however many of the context's doorbells it holds), 0 if none.
  uint64_t queue_bytes = 0;
  uint64_t doorbell_page = 0;

  // *payload with driver_in viewing the image as it is now: a field's copy appended to the
  // image (a kUserPtr buffer) may have moved its bytes since the caller took its view.
  abi::PayloadContext PayloadNow() const {
    abi::PayloadContext now = *payload;
    now.driver_in = image.bytes().subspan(payload_at, now.driver_in.size());
    return now;
  }
};

// What the kernel charges for pinning [start, start + length): the whole host pages it spans,
// which ib_umem_get() adds to the process's pinned_vm (ib_umem_num_pages), as bytes; a range
// that wraps (refused before it is forwarded) as UINT64_MAX.
uint64_t PinnedPageBytes(uint64_t start, uint64_t length);

// Translates every field of `layout` in image bytes [at, at + length).
Result<void> TranslateFields(TranslateContext& t, const abi::Layout& layout, size_t at,
                             size_t length);
// The same over `fields` alone: TranslatedFields(layout), listed once by the caller.
Result<void> TranslateFields(TranslateContext& t, const abi::Layout& layout, size_t at,
                             size_t length, std::span<const abi::FieldAt> fields);

// Whether translating looks at fields of `kind` (pinned addresses, fds, user pointers).
constexpr bool Translated(abi::FieldKind kind) {
  return kind == abi::FieldKind::kPinnedVa || kind == abi::FieldKind::kFdIn ||
         kind == abi::FieldKind::kUserPtr;
}
// The fields of `layout` TranslateFields looks at, in its order.
inline std::vector<abi::FieldAt> TranslatedFields(const abi::Layout& layout) {
  return abi::FieldsOf(layout, Translated);
}

}  // namespace rxp::proxy
