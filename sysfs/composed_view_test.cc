#include "sysfs/composed_view.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <memory>

#include "sysfs/disk_fs.h"
#include "sysfs/synthesize.h"
#include "sysfs/testing/hosts.h"
#include "sysfs/testing/temp_dir.h"

namespace rxp::sysfs {
namespace {

namespace fs = std::filesystem;

// A host /sys with a CPU directory (passthrough), links out of it, and things to hide.
struct Host {
  Host() {
    auto put = [&](const std::string& rel, const std::string& text) {
      fs::create_directories(fs::path(tmp / rel).parent_path());
      std::ofstream(tmp / rel) << text;
    };
    put("devices/system/cpu/online", "0-7\n");
    put("devices/system/cpu/cpu0/topology/core_id", "0\n");
    fs::create_directory_symlink("../../node/node0", tmp / "devices/system/cpu/cpu0/node0");
    fs::create_directory_symlink("../../../LNXSYSTM:00/device:00", tmp / "devices/system/cpu/cpu0/firmware_node");
    put("devices/LNXSYSTM:00/device:00/path", "\\_SB_.SCK0.C000\n");
    put("devices/system/node/node0/cpulist", "0-63\n");  // the host's own, must not show
    put("class/dmi/id/product_uuid", "secret\n");
    put("fs/cgroup/memory.max", "max\n");
  }
  testing::TempDir tmp;
};

struct View {
  View()
      : vfs(std::make_shared<const Tree>(Synthesize(testing::MiniHost()).value())),
        disk(DiskFs::Open(host.tmp.path()).value()),
        view(vfs, disk) {}
  Host host;
  SysfsVfs vfs;
  DiskFs disk;
  ComposedView view;
};

TEST_CASE("Passthrough paths come from the host, everything else from the tree") {
  View v;
  CHECK(v.view.ReadFile("/devices/system/cpu/online", 100).value() == "0-7\n");
  CHECK(v.view.ReadFile("/devices/system/cpu/cpu0/topology/core_id", 100).value() == "0\n");
  CHECK(v.view.ReadFile("/fs/cgroup/memory.max", 100).value() == "max\n");
  CHECK(v.view.ReadFile("/class/infiniband/mlx5_0/node_type", 100).value() == "1: CA\n");
  // Hidden: present on the host, absent from the view.
  CHECK(v.view.ReadFile("/class/dmi/id/product_uuid", 100).error().errnum == ENOENT);
  CHECK(v.view.Kind("/class/dmi", true).error().errnum == ENOENT);
}

TEST_CASE("Host links and '..' that leave a passthrough point re-enter the tree") {
  View v;
  // cpu0/node0 -> ../../node/node0 lands on the synthesized node0 (cpus 0-3), not the host's.
  CHECK(v.view.ReadFile("/devices/system/cpu/cpu0/node0/cpulist", 100).value() == "0-3\n");
  CHECK(v.view.RealPath("/devices/system/cpu/cpu0/node0").value() == "/devices/system/node/node0");
  CHECK(v.view.ReadFile("/devices/system/cpu/../node/node1/cpulist", 100).value() == "4-7\n");
  // A link into a hidden part of the host finds nothing.
  CHECK(v.view.ReadFile("/devices/system/cpu/cpu0/firmware_node/path", 100).error().errnum == ENOENT);
  CHECK(v.view.ReadLink("/devices/system/cpu/cpu0/firmware_node").value() == "../../../LNXSYSTM:00/device:00");
  CHECK(v.view.Kind("/devices/system/cpu/cpu0/node0", false).value() == FileKind::kSymlink);
  CHECK(v.view.RealPath("/devices/system/cpu/cpu0/topology").value() == "/devices/system/cpu/cpu0/topology");
  auto listing = v.view.ListDir("/devices/system/cpu/cpu0").value();
  std::sort(listing.begin(), listing.end());
  CHECK(listing == std::vector<std::string>{"firmware_node", "node0", "topology"});
}

}  // namespace
}  // namespace rxp::sysfs
