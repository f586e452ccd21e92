#include "sysfs/cpuset.h"

#include <catch2/catch.hpp>

namespace rxp::sysfs {
namespace {

TEST_CASE("cpulists round-trip in the kernel's format") {
  auto set = ParseCpuList("0-55,112-167");
  REQUIRE(set.ok());
  CHECK(set->Count() == 112);
  CHECK(set->Contains(55));
  CHECK_FALSE(set->Contains(56));
  CHECK(set->ToList() == "0-55,112-167");
  CHECK(ParseCpuList("3").value().ToList() == "3");
  CHECK(ParseCpuList("").value().empty());
  for (const char* bad : {"1,", ",1", "5-3", "a", "0-8192", "1--2"}) {
    INFO(bad);
    CHECK_FALSE(ParseCpuList(bad).ok());
  }
}

TEST_CASE("cpumasks parse and print like %*pb") {
  // A 224-CPU host (2 x 56 cores x 2 threads): node 0 = 0-55,112-167.
  auto list = ParseCpuList("0-55,112-167").value();
  std::string mask = list.ToMask(224);
  CHECK(mask == "00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff");
  auto back = ParseCpuMask(mask);
  REQUIRE(back.ok());
  CHECK(*back == list);
  // Two CPUs: the kernel prints a single digit.
  CHECK(ParseCpuList("0-1").value().ToMask(2) == "3");
  CHECK(ParseCpuMask("3").value().ToList() == "0-1");
  CHECK(ParseCpuList("0-7").value().ToMask(8) == "ff");
  for (const char* bad : {"", "xyz", "123456789", ",ff", "ff,", "0xff"}) {
    INFO(bad);
    CHECK_FALSE(ParseCpuMask(bad).ok());
  }
}

}  // namespace
}  // namespace rxp::sysfs
