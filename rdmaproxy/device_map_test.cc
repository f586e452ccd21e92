#include "rdmaproxy/device_map.h"

#include <catch2/catch.hpp>

namespace rxp::proxy {
namespace {

HostRdmaDevice Dev(std::string uverbs, std::string ibdev, uint32_t driver_id = 19) {
  HostRdmaDevice d;
  d.uverbs = std::move(uverbs);
  d.ibdev = std::move(ibdev);
  d.driver_id = driver_id;
  return d;
}

TEST_CASE("device lists name uverbs or ibdev devices, renamed or not") {
  const std::vector<HostRdmaDevice> host = {Dev("uverbs1", "rxe1"), Dev("uverbs0", "rxe0")};
  auto all = ParseDeviceList("", host);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].sandbox_uverbs == "uverbs0");  // host order, by uverbs number
  CHECK((*all)[1].sandbox_uverbs == "uverbs1");
  CHECK((*all)[1].host.driver_id == 19);
  auto renamed = ParseDeviceList("uverbs0=uverbs1", host);
  REQUIRE(renamed->size() == 1);
  CHECK((*renamed)[0].sandbox_uverbs == "uverbs0");
  CHECK((*renamed)[0].host.uverbs == "uverbs1");
  CHECK((*renamed)[0].host.ibdev == "rxe1");
  auto by_ibdev = ParseDeviceList("rxe1, uverbs5=rxe0", host);
  REQUIRE(by_ibdev.ok());
  CHECK((*by_ibdev)[0].sandbox_uverbs == "uverbs1");
  CHECK((*by_ibdev)[1].sandbox_uverbs == "uverbs5");
  CHECK(ParseDeviceList("mlx5_0", host).error().errnum == ENODEV);
  CHECK(ParseDeviceList("mlx5_0", host).error().reason.find("uverbs1(rxe1)") != std::string::npos);
  CHECK(ParseDeviceList("mlx5_0", {}).error().reason.find("none") != std::string::npos);
  CHECK(ParseDeviceList("foo=rxe0", host).error().errnum == EINVAL);
  CHECK(ParseDeviceList("uverbs0=rxe0,uverbs0=rxe1", host).error().errnum == EINVAL);
  CHECK(ParseDeviceList("rxe0,uverbs0", host).error().errnum == EINVAL);
  CHECK(ParseDeviceList("rxe0,,rxe1", host).error().errnum == EINVAL);
}

TEST_CASE("uverbs names have a number") {
  CHECK(UverbsNumber("uverbs0") == 0);
  CHECK(UverbsNumber("uverbs17") == 17);
  CHECK(UverbsNumber("uverbs") == -1);
  CHECK(UverbsNumber("uverbs1a") == -1);
  CHECK(UverbsNumber("rxe0") == -1);
}

}  // namespace
}  // namespace rxp::proxy
