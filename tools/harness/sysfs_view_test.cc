#include "tools/harness/sysfs_view.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sysfs/snapshot_schema.h"
#include "sysfs/testing/hosts.h"
#include "tools/harness/device_view.h"
#include "tools/harness/path_resolver.h"

namespace rxp::harness {
namespace {

namespace fs = std::filesystem;

// The real number of a character device on this machine, as the snapshot spells it.
sysfs::DevNum NumberOf(const char* path) {
  struct stat st{};
  REQUIRE(stat(path, &st) == 0);
  return {major(st.st_rdev), minor(st.st_rdev)};
}

// MiniHost (sysfs/testing/hosts.h) as seen on a machine whose uverbs nodes are stand-ins:
// host_dev/uverbs3 (rxe0) is /dev/null, host_dev/uverbs2 (mlx5_2) is /dev/zero, and the
// snapshot carries their real numbers, as a snapshot of that machine would.
struct StandInHost {
  StandInHost() {
    char templ[] = "/tmp/rxp-sysfs-view.XXXXXX";
    root = mkdtemp(templ);
    dev = root + "/dev";
    fs::create_directories(dev);
    fs::create_directory(root + "/tmp");
    fs::create_symlink("/dev/null", dev + "/uverbs3");
    fs::create_symlink("/dev/zero", dev + "/uverbs2");
    std::ofstream(dev + "/uverbs1") << "";  // not a character device
    snapshot = sysfs::testing::MiniHost();
    for (auto& d : snapshot.rdma_devices) {
      if (d.name == "rxe0") d.uverbs->dev = NumberOf("/dev/null");
      if (d.name == "mlx5_2") d.uverbs->dev = NumberOf("/dev/zero");
    }
  }
  ~StandInHost() { fs::remove_all(root); }

  static DeviceMapping Map(const char* sandbox, const char* uverbs, const char* ibdev) {
    DeviceMapping m;
    m.sandbox_uverbs = sandbox;
    m.host.uverbs = uverbs;
    m.host.ibdev = ibdev;
    return m;
  }

  std::string root, dev;
  sysfs::Snapshot snapshot;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename());
  return out;
}

TEST_CASE("the run's snapshot keeps only its devices, under their sandbox names", "[sysfs]") {
  StandInHost host;
  auto selected = SelectSysfsForDevices(
      host.snapshot, {StandInHost::Map("uverbs0", "uverbs3", "rxe0")}, host.dev);
  REQUIRE(selected.ok());
  REQUIRE(selected->rdma_devices.size() == 1);
  const sysfs::Uverbs& uv = *selected->rdma_devices[0].uverbs;
  CHECK(selected->rdma_devices[0].name == "rxe0");
  CHECK(uv.name == "uverbs0");                     // what the program's node is called
  CHECK(uv.dev == NumberOf("/dev/null"));          // and what it really is
  CHECK(uv.host_name == std::optional<std::string>("uverbs3"));
  // rxe0's netdev comes along; the other NICs and RDMA devices do not, the GPUs do.
  CHECK(selected->netdevs.size() == 1);
  CHECK(selected->netdevs[0].name == "veth0");
  CHECK(selected->FindRdma("mlx5_2") == nullptr);
  CHECK(selected->FindPci(sysfs::ParseBdf("0000:81:00.1").value()) == nullptr);
  CHECK(selected->FindPci(sysfs::ParseBdf("0000:82:00.0").value()) != nullptr);

  // Two devices, names swapped around.
  auto two = SelectSysfsForDevices(host.snapshot,
                                   {StandInHost::Map("uverbs1", "uverbs3", "rxe0"),
                                    StandInHost::Map("uverbs0", "uverbs2", "mlx5_2")},
                                   host.dev);
  REQUIRE(two.ok());
  CHECK(two->FindRdma("rxe0")->uverbs->name == "uverbs1");
  CHECK(two->FindRdma("mlx5_2")->uverbs->name == "uverbs0");
  CHECK(two->FindRdma("mlx5_2")->uverbs->dev == NumberOf("/dev/zero"));
}

TEST_CASE("a snapshot that does not describe the run's devices is refused", "[sysfs]") {
  StandInHost host;
  // A device the snapshot lacks: the error lists what it has.
  auto missing = SelectSysfsForDevices(host.snapshot, {StandInHost::Map("uverbs0", "uverbs3", "rxe9")},
                                       host.dev);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().errnum == ENOENT);
  CHECK_THAT(missing.error().reason, Catch::Contains("no RDMA device rxe9") &&
                                         Catch::Contains("mlx5_0, mlx5_1, mlx5_2, rxe0"));
  // The same device under another uverbs node on this host: a stale snapshot.
  fs::create_symlink("/dev/null", host.dev + "/uverbs5");
  auto renamed = SelectSysfsForDevices(host.snapshot, {StandInHost::Map("uverbs0", "uverbs5", "rxe0")},
                                       host.dev);
  REQUIRE_FALSE(renamed.ok());
  CHECK(renamed.error().errnum == ESTALE);
  CHECK_THAT(renamed.error().reason, Catch::Contains("rxe0 is uverbs3"));
  // The same node name with another device number (MiniHost's own 231:195).
  auto stale = SelectSysfsForDevices(sysfs::testing::MiniHost(),
                                     {StandInHost::Map("uverbs0", "uverbs3", "rxe0")}, host.dev);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().errnum == ESTALE);
  CHECK_THAT(stale.error().reason, Catch::Contains("231:195"));
  // The host node itself must be a character device that exists.
  auto plain = SelectSysfsForDevices(host.snapshot, {StandInHost::Map("uverbs0", "uverbs1", "mlx5_1")},
                                     host.dev);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().errnum == ENODEV);
  auto absent = SelectSysfsForDevices(host.snapshot, {StandInHost::Map("uverbs0", "uverbs0", "mlx5_0")},
                                      host.dev);
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.error().errnum == ENOENT);
}

TEST_CASE("the device view serves all of /sys synthesized from a snapshot", "[sysfs]") {
  StandInHost host;
  DeviceViewOptions options;
  options.host_dev = host.dev;
  options.host_sysfs = "/sys";
  options.temp_parent = host.root + "/tmp";
  options.sysfs_snapshot = host.snapshot;
  auto view = DeviceView::Create({StandInHost::Map("uverbs0", "uverbs3", "rxe0")}, options);
  REQUIRE(view.ok());
  const std::string root = (*view)->root();
  RuleResolver resolver((*view)->rules());
  auto served = [&](const std::string& path) {
    Resolution r = resolver.Resolve(path, PathOp::kOpen);
    REQUIRE(r.kind == Resolution::Kind::kRewrite);
    return r.host_path;
  };

  // The device node and its class entries agree: same sandbox name, the node's real number.
  CHECK(resolver.Resolve("/dev/infiniband/uverbs0", PathOp::kOpen).host_path == host.dev + "/uverbs3");
  CHECK(Names(served("/sys/class/infiniband_verbs")) == std::set<std::string>{"abi_version", "uverbs0"});
  CHECK(Slurp(served("/sys/class/infiniband_verbs/uverbs0/ibdev")) == "rxe0\n");
  CHECK(Slurp(served("/sys/class/infiniband_verbs/uverbs0/dev")) == NumberOf("/dev/null").ToString() + "\n");
  CHECK(Names(served("/sys/class/infiniband")) == std::set<std::string>{"rxe0"});
  CHECK(fs::read_symlink(served("/sys/class/infiniband_verbs/uverbs0")) ==
        "../../devices/virtual/infiniband_verbs/uverbs0");
  // Only the selected device's paths exist under devices/: the other NICs are gone, the GPUs
  // and their bridges stay (sysfs::Select), and nothing of this machine's /sys shows through.
  CHECK(fs::exists(served("/sys/devices/virtual/infiniband/rxe0")));
  CHECK_FALSE(fs::exists(served("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0")));
  CHECK(fs::exists(served("/sys/devices/pci0000:80/0000:80:02.0/0000:82:00.0")));
  CHECK(Names(served("/sys/class/net")) == std::set<std::string>{"veth0"});
  CHECK_FALSE(fs::exists(served("/sys/class/infiniband_mad")));
  // The passthrough prefixes are the host's own (sysfs/policy.h).
  for (const char* pass : {"/sys/devices/system/cpu/online", "/sys/fs/cgroup", "/sys/kernel/mm/hugepages/x"})
    CHECK(resolver.Resolve(pass, PathOp::kOpen).kind == Resolution::Kind::kPassThrough);
  CHECK(resolver.Resolve("/sys/devices/system/node/node0", PathOp::kOpen).kind == Resolution::Kind::kRewrite);

  view->reset();
  CHECK_FALSE(fs::exists(root));  // removed with the view
}

TEST_CASE("a refused snapshot leaves no directory behind", "[sysfs]") {
  StandInHost host;
  DeviceViewOptions options;
  options.host_dev = host.dev;
  options.temp_parent = host.root + "/tmp";
  options.sysfs_snapshot = host.snapshot;
  auto view = DeviceView::Create({StandInHost::Map("uverbs0", "uverbs3", "rxe9")}, options);
  REQUIRE_FALSE(view.ok());
  CHECK(view.error().errnum == ENOENT);
  CHECK(Names(host.root + "/tmp").empty());
}

TEST_CASE("a snapshot of a live sysfs holds only the run's devices", "[sysfs]") {
  // A minimal live-looking sysfs: the class entries are what the reader starts from.
  char templ[] = "/tmp/rxp-sysfs-live.XXXXXX";
  const std::string root = mkdtemp(templ);
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    const std::string ib = root + "/devices/virtual/infiniband/rxe" + n;
    const std::string verbs = ib + "/../../infiniband_verbs/uverbs" + n;
    fs::create_directories(ib + "/ports/1/gids");
    fs::create_directories(verbs);
    std::ofstream(ib + "/node_type") << "1: CA\n";
    std::ofstream(ib + "/ports/1/link_layer") << "Ethernet\n";
    std::ofstream(verbs + "/ibdev") << "rxe" << n << "\n";
    std::ofstream(verbs + "/dev") << "231:19" << n << "\n";
    fs::create_directories(root + "/class/infiniband");
    fs::create_directories(root + "/class/infiniband_verbs");
    fs::create_symlink("../../devices/virtual/infiniband/rxe" + n, root + "/class/infiniband/rxe" + n);
    fs::create_symlink("../../devices/virtual/infiniband_verbs/uverbs" + n,
                       root + "/class/infiniband_verbs/uverbs" + n);
  }
  auto read = SnapshotHostSysfs(root, {StandInHost::Map("uverbs0", "uverbs1", "rxe1")});
  fs::remove_all(root);
  REQUIRE(read.ok());
  REQUIRE(read->snapshot.rdma_devices.size() == 1);
  CHECK(read->snapshot.rdma_devices[0].name == "rxe1");
  CHECK(read->snapshot.rdma_devices[0].uverbs->name == "uverbs1");
  CHECK(SnapshotHostSysfs("/nonexistent-rxp-sysfs", {}).error().errnum == ENOENT);
}

}  // namespace
}  // namespace rxp::harness
