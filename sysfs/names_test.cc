#include "sysfs/names.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

namespace rxp::sysfs {
namespace {

TEST_CASE("BDFs parse strictly and print like pci_name()") {
  auto bdf = ParseBdf("0000:17:1f.7");
  REQUIRE(bdf.ok());
  CHECK(bdf->domain == 0);
  CHECK(bdf->bus == 0x17);
  CHECK(bdf->dev == 0x1f);
  CHECK(bdf->fn == 7);
  CHECK(bdf->ToString() == "0000:17:1f.7");
  CHECK(bdf->BusId() == "0000:17");
  CHECK(bdf->RootName() == "pci0000:17");
  for (const char* bad : {"0000:17:00", "0000:17:20.0", "0000:17:00.8", "0000:1G:00.0",
                          "0000:1A:00.0", "000:17:00.0", "", "0000:17:00.0/", "../17:00.0"}) {
    INFO(bad);
    CHECK_FALSE(ParseBdf(bad).ok());
    CHECK_FALSE(IsBdf(bad));
  }
  auto wide = ParseBdf("10000:e0:06.0");
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.error().reason.find("wider than 16 bits") != std::string::npos);
}

TEST_CASE("Root buses parse from their bus id and their root complex directory") {
  auto bus = TryParseBusId("e332:00");
  REQUIRE(bus);
  CHECK(bus->domain == 0xe332);
  CHECK(bus->bus == 0);
  CHECK(bus->RootName() == "pcie332:00");
  auto root = TryParseRootName("pci0000:17");
  REQUIRE(root);
  CHECK(root->BusId() == "0000:17");
  for (const char* bad : {"e332:0", "e332:000", "E332:00", "10000:e0", "", "e332:00/"}) {
    INFO(bad);
    CHECK_FALSE(TryParseBusId(bad));
  }
  for (const char* bad : {"pci10000:e0", "pcie332", "PCI0000:00", "0000:00", "pci0000:00:00.0",
                          "VMBUS:00", "LNXSYSTM:00"}) {
    INFO(bad);
    CHECK_FALSE(TryParseRootName(bad));
  }
}

TEST_CASE("Device numbers and uverbs names") {
  auto dev = ParseDevNum("231:192");
  REQUIRE(dev.ok());
  CHECK(dev->major == 231);
  CHECK(dev->minor == 192);
  CHECK(dev->ToString() == "231:192");
  CHECK_FALSE(ParseDevNum("231").ok());
  CHECK_FALSE(ParseDevNum("231:-1").ok());
  CHECK_FALSE(ParseDevNum("4096:0").ok());  // major is 12 bits
  CHECK(UverbsIndex("uverbs12").value() == 12);
  CHECK_FALSE(UverbsIndex("uverbs").ok());
  CHECK_FALSE(UverbsIndex("umad0").ok());
  CHECK_FALSE(CheckUverbsName("x", "uverbs0/..").ok());
}

TEST_CASE("Path components refuse traversal, separators and control bytes") {
  CHECK(CheckComponent("x", "mlx5_0").ok());
  CHECK(CheckComponent("x", "0000:17:00.0").ok());
  for (std::string bad : {std::string(""), std::string("."), std::string(".."), std::string("a/b"),
                          std::string("a\nb"), std::string("a b"), std::string("a\0b", 3),
                          std::string("\xff"), std::string(256, 'a')}) {
    auto r = CheckComponent("field", bad);
    CHECK_FALSE(r.ok());
    if (!r.ok()) {
      CHECK(r.error().reason.starts_with("field: "));
      CHECK(r.error().reason.find('\n') == std::string::npos);  // one line, even for "a\nb"
    }
  }
  CHECK(CheckNetdevName("n", "ens1f0np0").ok());
  CHECK_FALSE(CheckNetdevName("n", "eth0:1").ok());
  CHECK_FALSE(CheckNetdevName("n", "sixteen_chars_xx").ok());
  CHECK(CheckIbdevName("d", std::string(63, 'm')).ok());
  CHECK_FALSE(CheckIbdevName("d", std::string(64, 'm')).ok());
}

TEST_CASE("Numbers parse without overflow") {
  CHECK(ParseDecimal("n", "18446744073709551615", UINT64_MAX).value() == UINT64_MAX);
  CHECK_FALSE(ParseDecimal("n", "18446744073709551616", UINT64_MAX).ok());
  CHECK_FALSE(ParseDecimal("n", "-1", 10).ok());
  CHECK_FALSE(ParseDecimal("n", "11", 10).ok());
  CHECK(ParseHex("c", "0x020700", 0xffffff).value() == 0x020700);
  CHECK(ParseHex("c", "15B3", 0xffff).value() == 0x15b3);
  CHECK_FALSE(ParseHex("c", "0x", 0xffff).ok());
  CHECK_FALSE(ParseHex("c", "0x1000000", 0xffffff).ok());
}

TEST_CASE("Natural order sorts device names the way people number them") {
  std::vector<std::string> names = {"mlx5_10", "mlx5_2", "mlx5_bond_0", "mlx5_1", "mlx5_0"};
  std::sort(names.begin(), names.end(), NaturalLess);
  CHECK(names == std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10", "mlx5_bond_0"});
  CHECK_FALSE(NaturalLess("a", "a"));
  CHECK(NaturalLess("a", "ab"));
}

}  // namespace
}  // namespace rxp::sysfs
