#include "rdmaproxy/translate.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "rdmaproxy/forward_image.h"
#include "rdmaproxy/testing/fakes.h"

namespace rxp::proxy {
namespace {

// A driver request that has both a buffer the kernel copies (kUserPtr with a length: its copy
// is appended to the image) and, after it, a queue buffer whose pinned length the driver
// derives from the request (Field::Pins): no driver layout mixes them today, and a length
// function must still read the request where the image holds it after the append moved it.
struct MixedRequest {
  uint64_t data_ptr;
  uint32_t data_len;
  uint32_t entries;
  uint64_t buf_addr;
};

const std::byte* seen_driver_in = nullptr;
uint64_t BufferLength(const abi::PayloadContext& c) {
  seen_driver_in = c.driver_in.data();
  uint32_t entries = 0;
  std::memcpy(&entries, c.driver_in.data() + offsetof(MixedRequest, entries), 4);
  return uint64_t{entries} * 64;
}

constexpr abi::Field kMixedFields[] = {
    RXP_FIELD(MixedRequest, data_ptr, kUserPtr).Len("data_len"),
    RXP_FIELD(MixedRequest, data_len, kU32),
    RXP_FIELD(MixedRequest, entries, kU32),
    RXP_FIELD(MixedRequest, buf_addr, kPinnedVa).Pins(&BufferLength),
};
const abi::Layout kMixed{"mixed_request", sizeof(MixedRequest), kMixedFields};

TEST_CASE("a driver pin length reads the request where the image holds it now", "[engine]") {
  constexpr uint64_t kMirror = 0x100000000;
  testing::FakeAppMemory memory(kMirror);
  const uint64_t buffer = memory.Alloc(4096);
  const uint64_t data = memory.Alloc(4000);
  MixedRequest request{data, 4000, 32, buffer};

  ForwardImage image;
  const size_t at = image.Append(std::as_bytes(std::span(&request, 1)));
  std::vector<OutputCopy> outputs;
  std::vector<Produced> produced;
  abi::PayloadContext payload;
  payload.driver_in = image.bytes().subspan(at, sizeof(request));
  TranslateContext t{image, outputs, produced, memory, false, true, "TEST", {}, &payload, at};
  REQUIRE(TranslateFields(t, kMixed, at, sizeof(request)).ok());

  // The 4000-byte copy grew the image past what it held: the view the caller took is stale.
  CHECK(seen_driver_in == image.bytes().data() + at);
  CHECK(t.queue_bytes == 4096);  // 32 * 64 bytes: the one page ib_umem_get charges
  MixedRequest forwarded;
  std::memcpy(&forwarded, image.bytes().data() + at, sizeof(forwarded));
  CHECK(forwarded.buf_addr == buffer + kMirror);
}

}  // namespace
}  // namespace rxp::proxy
