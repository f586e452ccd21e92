// ForwardImage: reused across commands, relocated into a copy (ptrace harness) or in place
// (sentry mode).
#include "rdmaproxy/forward_image.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstring>

namespace rxp::proxy {
namespace {

uint64_t U64At(std::span<const std::byte> bytes, size_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

TEST_CASE("forward image: appended, reserved and padding bytes, after reuse too", "[engine]") {
  ForwardImage image;
  const std::array<std::byte, 3> abc{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
  for (int round = 0; round < 2; ++round) {
    image.Clear();
    CHECK(image.size() == 0);
    CHECK(image.Append(abc) == 0);
    const size_t room = image.Reserve(16);  // 8-aligned: 5 padding bytes first
    CHECK(room == 8);
    CHECK(image.size() == 24);
    const auto b = image.bytes();
    CHECK(b[2] == std::byte{'c'});
    for (size_t i = 3; i < 24; ++i) CHECK(b[i] == std::byte{0});
    // Dirty what the next round reuses: it must come back zeroed.
    std::memset(image.bytes().data() + 3, 0xff, 21);
  }
}

TEST_CASE("forward image: pointers relocated into a copy and in place", "[engine]") {
  ForwardImage image;
  const size_t slot = image.Reserve(8);
  const size_t target = image.Reserve(32);
  image.PointTo(slot, target);
  const auto copy = image.Relocated(0x1000);
  CHECK(U64At(copy, slot) == 0x1000 + target);
  CHECK(U64At(image.bytes(), slot) == 0);  // the image itself keeps offsets

  const auto in_place = image.RelocateInPlace();
  CHECK(in_place.data() == image.bytes().data());
  CHECK(in_place.size() == image.size());
  CHECK(U64At(in_place, slot) == reinterpret_cast<uint64_t>(in_place.data()) + target);
}

}  // namespace
}  // namespace rxp::proxy
