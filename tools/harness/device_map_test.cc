#include "tools/harness/device_map.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <fstream>

#include "tools/harness/device_view.h"

namespace rxp::harness {
namespace {

namespace fs = std::filesystem;

// A fake host: sysfs with two rxe devices (uverbs0 = rxe0, uverbs1 = rxe1) laid out as the
// kernel does (class entries are relative links into devices/), and a /dev/infiniband.
struct FakeHost {
  FakeHost() {
    char templ[] = "/tmp/rxp-fake-host.XXXXXX";
    root = mkdtemp(templ);
    for (int i = 0; i < 2; ++i) {
      const std::string n = std::to_string(i);
      const std::string verbs = root + "/sys/devices/virtual/infiniband_verbs/uverbs" + n;
      const std::string ib = root + "/sys/devices/virtual/infiniband/rxe" + n;
      fs::create_directories(verbs);
      fs::create_directories(ib);
      std::ofstream(verbs + "/ibdev") << "rxe" << n << "\n";
      std::ofstream(verbs + "/dev") << "231:19" << n << "\n";
      std::ofstream(ib + "/node_type") << "1: CA\n";
      fs::create_directories(root + "/sys/class/infiniband_verbs");
      fs::create_directories(root + "/sys/class/infiniband");
      fs::create_symlink("../../devices/virtual/infiniband_verbs/uverbs" + n,
                         root + "/sys/class/infiniband_verbs/uverbs" + n);
      fs::create_symlink("../../devices/virtual/infiniband/rxe" + n,
                         root + "/sys/class/infiniband/rxe" + n);
      fs::create_directories(root + "/dev/infiniband");
      std::ofstream(root + "/dev/infiniband/uverbs" + n) << "";
    }
    std::ofstream(root + "/sys/class/infiniband_verbs/abi_version") << "6\n";
    fs::permissions(root + "/sys/class/infiniband_verbs/abi_version", fs::perms(0444));
    std::ofstream(root + "/dev/infiniband/rdma_cm") << "";
  }
  ~FakeHost() { fs::remove_all(root); }
  std::string root;
};

TEST_CASE("host devices are discovered from sysfs", "[devices]") {
  FakeHost host;
  auto devices = DiscoverHostDevices(host.root + "/sys");
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 2);
  CHECK((*devices)[0].uverbs == "uverbs0");
  CHECK((*devices)[0].ibdev == "rxe0");
  CHECK((*devices)[1].ibdev == "rxe1");
  CHECK(DiscoverHostDevices(host.root + "/nonexistent")->empty());
}

TEST_CASE("driver ids come from netlink, matched by uverbs name", "[devices]") {
  FakeHost host;
  auto devices = DiscoverHostDevices(host.root + "/sys");
  REQUIRE(devices->size() == 2);
  proxy::HostRdmaDevice rxe1;
  rxe1.uverbs = "uverbs1";
  rxe1.ibdev = "rxe1";
  rxe1.driver_id = 19;
  const auto with = WithDriverIds(*devices, {rxe1});
  CHECK(with[0].driver_id == 0);  // netlink did not report it
  CHECK(with[0].ibdev == "rxe0");
  CHECK(with[1].driver_id == 19);
  // The shared grammar (rdmaproxy/device_map.h) works on what discovery found.
  auto renamed = ParseDeviceList("uverbs0=rxe1", with);
  REQUIRE(renamed.ok());
  CHECK((*renamed)[0].host.uverbs == "uverbs1");
  CHECK((*renamed)[0].host.driver_id == 19);
}

TEST_CASE("the device view shows only allowed devices under their sandbox names", "[devices]") {
  FakeHost host;
  HostDevice rxe1;
  rxe1.uverbs = "uverbs1";
  rxe1.ibdev = "rxe1";
  const std::vector<DeviceMapping> devices = {{"uverbs0", rxe1}};
  DeviceViewOptions options;
  options.host_sysfs = host.root + "/sys";
  options.host_dev = host.root + "/dev/infiniband";
  options.temp_parent = host.root;
  auto view = DeviceView::Create(devices, options);
  REQUIRE(view.ok());
  const std::string root = (*view)->root();
  RuleResolver resolver((*view)->rules());

  // Through the rules, as the tracer would: the renamed device and its sysfs entries.
  auto dev = resolver.Resolve("/dev/infiniband/uverbs0", PathOp::kOpen);
  CHECK(dev.host_path == host.root + "/dev/infiniband/uverbs1");
  CHECK(dev.proxy);
  CHECK(resolver.Resolve("/dev/infiniband/uverbs1", PathOp::kOpen).kind == Resolution::Kind::kFail);
  CHECK(resolver.Resolve("/dev/infiniband/rdma_cm", PathOp::kOpen).proxy);
  const std::string ibdev_file =
      resolver.Resolve("/sys/class/infiniband_verbs/uverbs0/ibdev", PathOp::kOpen).host_path;
  std::ifstream ibdev(ibdev_file);
  std::string name;
  ibdev >> name;
  CHECK(name == "rxe1");  // the host attribute, reached through the view's link
  CHECK(fs::exists(resolver.Resolve("/sys/class/infiniband/rxe1/node_type", PathOp::kStat).host_path));
  CHECK_FALSE(fs::exists(resolver.Resolve("/sys/class/infiniband/rxe0", PathOp::kStat).host_path));

  auto names = [](const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename());
    return out;
  };
  CHECK(names(root + "/dev/infiniband") == std::set<std::string>{"rdma_cm", "uverbs0"});
  CHECK(names(root + "/sys/class/infiniband_verbs") ==
        std::set<std::string>{"abi_version", "uverbs0"});
  CHECK(names(root + "/sys/class/infiniband") == std::set<std::string>{"rxe1"});
  CHECK(names(root + "/sys/class/infiniband_mad").empty());
  // The copied attribute keeps the host's permission bits (sysfs: read-only), not the umask's.
  CHECK(fs::status(root + "/sys/class/infiniband_verbs/abi_version").permissions() == fs::perms(0444));
  // The class link keeps the host's own text, so readlink/realpath look like the host's.
  CHECK(fs::read_symlink(root + "/sys/class/infiniband_verbs/uverbs0") ==
        "../../devices/virtual/infiniband_verbs/uverbs1");
  view->reset();
  CHECK_FALSE(fs::exists(root));  // removed with the view
}

TEST_CASE("the verbs class directory lists the devices in host index order", "[devices]") {
  FakeHost host;
  // The host registered rxe1 before rxe0 (index 3 and 7); the sandbox names go the other way.
  HostDevice rxe0, rxe1;
  rxe0.uverbs = "uverbs0";
  rxe0.ibdev = "rxe0";
  rxe0.index = 7;
  rxe1.uverbs = "uverbs1";
  rxe1.ibdev = "rxe1";
  rxe1.index = 3;
  const std::vector<DeviceMapping> devices = {{"uverbs0", rxe0}, {"uverbs1", rxe1}};
  for (int mode = 0; mode < 2; ++mode) {
    DeviceViewOptions options;
    options.host_sysfs = host.root + "/sys";
    options.host_dev = host.root + "/dev/infiniband";
    options.temp_parent = host.root;
    if (mode == 1) options.sysfs_dir = "/srv/rendered-sysfs";
    auto view = DeviceView::Create(devices, options);
    REQUIRE(view.ok());
    RuleResolver resolver((*view)->rules());
    const Resolution dir = resolver.Resolve("/sys/class/infiniband_verbs", PathOp::kOpen);
    CHECK(dir.proxy);
    REQUIRE(dir.listing_order != nullptr);
    CHECK(*dir.listing_order == std::vector<std::string>{"uverbs1", "uverbs0"});
    CHECK(dir.host_path == (mode == 0 ? (*view)->root() + "/sys/class/infiniband_verbs"
                                      : "/srv/rendered-sysfs/class/infiniband_verbs"));
    // Only the directory itself: what is below it is served as before, not proxied.
    const Resolution below = resolver.Resolve("/sys/class/infiniband_verbs/uverbs0", PathOp::kOpen);
    CHECK_FALSE(below.proxy);
    CHECK(below.listing_order == nullptr);
  }
  // One device has no order to keep: the directory is not proxied.
  DeviceViewOptions options;
  options.host_sysfs = host.root + "/sys";
  options.host_dev = host.root + "/dev/infiniband";
  options.temp_parent = host.root;
  auto one = DeviceView::Create({devices[0]}, options);
  REQUIRE(one.ok());
  CHECK_FALSE(RuleResolver((*one)->rules()).Resolve("/sys/class/infiniband_verbs", PathOp::kOpen).proxy);
}

TEST_CASE("with a sysfs directory all of /sys is served from it", "[devices]") {
  FakeHost host;
  DeviceViewOptions options;
  options.host_sysfs = host.root + "/sys";
  options.host_dev = host.root + "/dev/infiniband";
  options.temp_parent = host.root;
  options.sysfs_dir = "/srv/rendered-sysfs/";
  auto view = DeviceView::Create({}, options);
  REQUIRE(view.ok());
  RuleResolver resolver((*view)->rules());
  CHECK(resolver.Resolve("/sys/class/net/eth0", PathOp::kOpen).host_path ==
        "/srv/rendered-sysfs/class/net/eth0");
  // No device allowed: no rdma_cm either.
  CHECK(resolver.Resolve("/dev/infiniband/rdma_cm", PathOp::kOpen).kind == Resolution::Kind::kFail);
}

}  // namespace
}  // namespace rxp::harness
