#include "abi/result.h"

#include <catch2/catch.hpp>

#include <memory>

namespace rxp {
namespace {

Result<int> Half(int v) {
  if (v % 2 != 0) return Fail(EINVAL, "{} is odd", v);
  return v / 2;
}

Result<int> Quarter(int v) {
  auto h = Half(v);
  if (!h) return std::move(h).error();
  return Half(*h);
}

Result<void> CheckEven(int v) {
  RXP_TRY(Half(v));
  return Ok();
}

TEST_CASE("Result carries a value or an errno with a reason", "[result]") {
  auto good = Half(8);
  REQUIRE(good.ok());
  CHECK(*good == 4);

  auto bad = Quarter(6);  // 6/2 = 3 is odd
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().errnum == EINVAL);
  CHECK(bad.error().reason == "3 is odd");
  CHECK(bad.error().ToString() == "EINVAL: 3 is odd");
}

TEST_CASE("RXP_TRY propagates the first error", "[result]") {
  CHECK(CheckEven(4).ok());
  auto r = CheckEven(5);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "5 is odd");
}

TEST_CASE("Result holds move-only values", "[result]") {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  REQUIRE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  CHECK(*p == 7);
}

TEST_CASE("Error names unknown errnos numerically", "[result]") {
  Error e{9999, "odd"};
  CHECK(e.ToString().find("odd") != std::string::npos);
}

}  // namespace
}  // namespace rxp
