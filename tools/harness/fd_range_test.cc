#include "tools/harness/fd_range.h"

#include <catch2/catch.hpp>

namespace rxp::harness {
namespace {

TEST_CASE("the default range sits just below min(soft limit, 1024)", "[fd_range]") {
  auto usual = FdRange::ForSoftLimit(1024);
  REQUIRE(usual.ok());
  CHECK(usual->base() == 768);
  CHECK(usual->end() == 1024);
  CHECK(FdRange::ForSoftLimit(1048576)->base() == 768);  // capped: select() limit
  CHECK(FdRange::ForSoftLimit(RLIM_INFINITY)->base() == 768);
  CHECK(FdRange::ForSoftLimit(1000)->ToString() == "[512, 768)");
  CHECK(FdRange::ForSoftLimit(300)->ToString() == "[128, 256)");
  CHECK(FdRange::ForSoftLimit(200)->ToString() == "[128, 192)");
  auto tiny = FdRange::ForSoftLimit(100);
  REQUIRE_FALSE(tiny.ok());
  CHECK(tiny.error().errnum == EMFILE);
}

TEST_CASE("a program's range follows its hard limit, which the tracer can raise the soft to", "[fd_range]") {
  CHECK(FdRange::ForLimits(1024, 1024)->ToString() == "[768, 1024)");
  CHECK(FdRange::ForLimits(1024, 524288)->ToString() == "[768, 1024)");
  CHECK(FdRange::ForLimits(64, 4096)->ToString() == "[768, 1024)");  // `ulimit -Sn 64`
  CHECK(FdRange::ForLimits(64, RLIM_INFINITY)->ToString() == "[768, 1024)");
  CHECK(FdRange::ForLimits(256, 256)->ToString() == "[128, 256)");  // `ulimit -n 256`
  CHECK(FdRange::ForLimits(100, 300)->ToString() == "[128, 256)");
  auto tiny = FdRange::ForLimits(64, 100);
  REQUIRE_FALSE(tiny.ok());
  CHECK(tiny.error().errnum == EMFILE);
  CHECK_THAT(tiny.error().reason, Catch::Contains("hard limit >= 128"));
}

TEST_CASE("Contains compares the low 32 bits, as the kernel does", "[fd_range]") {
  const FdRange r = *FdRange::Make(768, 256);
  CHECK(r.Contains(768));
  CHECK(r.Contains(1023));
  CHECK_FALSE(r.Contains(767));
  CHECK_FALSE(r.Contains(1024));
  CHECK(r.Contains((1ULL << 32) | 800));  // fd 800 with garbage above it
  CHECK_FALSE(r.Contains(static_cast<uint64_t>(-1)));  // AT_FDCWD-style -1 / MAP_ANONYMOUS fd
  CHECK(r.mask() == 0xffffff00u);
}

TEST_CASE("the upper half stops data syscalls, the lower half is the event files'", "[fd_range]") {
  const FdRange r = *FdRange::Make(768, 256);
  const FdRange stopping = r.StoppingHalf();
  CHECK(stopping.ToString() == "[896, 1024)");
  CHECK(stopping.mask() == 0xffffff80u);
  CHECK(stopping.Contains(896));
  CHECK(stopping.Contains(1023));
  CHECK_FALSE(stopping.Contains(895));
  CHECK_FALSE(stopping.Contains(1024));
  CHECK(stopping.Contains((1ULL << 32) | 900));
  // The smallest block the harness uses still has two aligned halves.
  const FdRange small = *FdRange::Make(192, 64);
  CHECK(small.StoppingHalf().ToString() == "[224, 256)");
}

TEST_CASE("malformed ranges are rejected", "[fd_range]") {
  CHECK(FdRange::Make(768, 100).error().errnum == EINVAL);  // not a power of two
  CHECK(FdRange::Make(700, 256).error().errnum == EINVAL);  // not aligned
  CHECK(FdRange::Make(0, 256).error().errnum == EINVAL);    // would cover stdin
  CHECK(FdRange::Make(768, 8).error().errnum == EINVAL);    // too small
}

}  // namespace
}  // namespace rxp::harness
