#include "sysfs/synthesize.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sysfs/testing/hosts.h"
#include "sysfs/vfs.h"

namespace rxp::sysfs {
namespace {

SysfsVfs MiniVfs() {
  auto tree = Synthesize(testing::MiniHost());
  REQUIRE(tree.ok());
  return SysfsVfs(std::make_shared<const Tree>(std::move(*tree)));
}

std::string Read(const SysfsVfs& vfs, std::string_view path) {
  auto r = vfs.ReadAll(path);
  INFO(path);
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("PCI functions nest under their bridges like the kernel's device tree") {
  SysfsVfs vfs = MiniVfs();
  const std::string nic = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
  CHECK(Read(vfs, nic + "/class") == "0x020700\n");
  CHECK(Read(vfs, nic + "/numa_node") == "0\n");
  CHECK(Read(vfs, nic + "/local_cpulist") == "0-3\n");
  CHECK(vfs.ReadLink(nic + "/subsystem").value() == "../../../../../../bus/pci");
  CHECK(vfs.RealPath(nic + "/subsystem").value() == "/sys/bus/pci");
  CHECK(vfs.ReadLink(nic + "/driver").value() == "../../../../../../bus/pci/drivers/mlx5_core");
  CHECK(vfs.RealPath("/sys/bus/pci/drivers/mlx5_core/0000:03:00.0").value() == nic);
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:03:00.0").value() ==
        "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  // The config header is 64 bytes, vendor first (little endian).
  std::string config = Read(vfs, nic + "/config");
  REQUIRE(config.size() == 64);
  CHECK(static_cast<uint8_t>(config[0]) == 0xb3);
  CHECK(static_cast<uint8_t>(config[1]) == 0x15);
}

TEST_CASE("NCCL's pci_bus trick resolves every function to its canonical directory") {
  SysfsVfs vfs = MiniVfs();
  // ncclOsGetPciPath: realpath("/sys/class/pci_bus/<bus>/../../<bdf>").
  for (const char* bdf : {"0000:00:01.0", "0000:01:00.0", "0000:03:00.0", "0000:04:00.0",
                          "0000:81:00.1", "0000:81:00.2", "0000:82:00.0"}) {
    auto b = ParseBdf(bdf).value();
    auto real = vfs.RealPath("/sys/class/pci_bus/" + b.BusId() + "/../../" + bdf);
    INFO(bdf);
    REQUIRE(real.ok());
    CHECK(real->ends_with(std::string("/") + bdf));
    CHECK(*real == vfs.RealPath(std::string("/sys/bus/pci/devices/") + bdf).value());
  }
  CHECK(vfs.ReadLink("/sys/class/pci_bus/0000:03").value() ==
        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/pci_bus/0000:03");
  CHECK(vfs.ReadLink("/sys/class/pci_bus/0000:80").value() == "../../devices/pci0000:80/pci_bus/0000:80");
  CHECK(vfs.ReadLink("/sys/devices/pci0000:80/pci_bus/0000:80/device").value() == "../../../pci0000:80");
}

TEST_CASE("A root complex below a VMBus device keeps its place (Hyper-V vPCI)") {
  Snapshot host = testing::MiniHost();
  const std::string vmbus = "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/00000080-0000-0000-0000-000000000080";
  host.pci_root_parents["0000:80"] = vmbus;
  auto tree = Synthesize(host);
  REQUIRE(tree.ok());
  SysfsVfs vfs(std::make_shared<const Tree>(std::move(*tree)));
  const std::string root = "/sys/devices/" + vmbus + "/pci0000:80";
  CHECK(vfs.RealPath("/sys/bus/pci/devices/0000:82:00.0").value() == root + "/0000:80:02.0/0000:82:00.0");
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:80:02.0").value() ==
        "../../../devices/" + vmbus + "/pci0000:80/0000:80:02.0");
  CHECK(vfs.RealPath("/sys/class/pci_bus/0000:80").value() == root + "/pci_bus/0000:80");
  CHECK(vfs.RealPath("/sys/class/pci_bus/0000:80/../../0000:80:02.0").value() == root + "/0000:80:02.0");
  CHECK(vfs.RealPath("/sys/class/infiniband/mlx5_1/device").value().starts_with(root + "/"));
  CHECK(Read(vfs, root + "/0000:80:02.0/0000:82:00.0/class") == "0x030200\n");
  CHECK(vfs.RealPath(root + "/0000:80:02.0/subsystem").value() == "/sys/bus/pci");
  CHECK_FALSE(vfs.RealPath("/sys/devices/pci0000:80").ok());
  // The other root stays where it was.
  CHECK(vfs.RealPath("/sys/bus/pci/devices/0000:00:01.0").value() == "/sys/devices/pci0000:00/0000:00:01.0");
}

TEST_CASE("RDMA, verbs and net class devices are kernel-style links") {
  SysfsVfs vfs = MiniVfs();
  CHECK(vfs.ReadLink("/sys/class/infiniband/mlx5_0").value() ==
        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/infiniband/mlx5_0");
  CHECK(vfs.ReadLink("/sys/class/infiniband/mlx5_0/device").value() == "../../../0000:03:00.0");
  CHECK(Read(vfs, "/sys/class/infiniband/mlx5_0/device/modalias").starts_with("pci:v000015B3d00001021"));
  CHECK(Read(vfs, "/sys/class/infiniband/mlx5_0/node_type") == "1: CA\n");
  CHECK(Read(vfs, "/sys/class/infiniband_verbs/abi_version") == "6\n");
  CHECK(Read(vfs, "/sys/class/infiniband_verbs/uverbs0/ibdev") == "mlx5_0\n");
  CHECK(Read(vfs, "/sys/class/infiniband_verbs/uverbs0/dev") == "231:192\n");
  CHECK(vfs.RealPath("/sys/class/infiniband_verbs/uverbs1/device").value().ends_with("/0000:81:00.0"));
  CHECK(vfs.ReadLink("/sys/class/net/ens1f1np1").value() ==
        "../../devices/pci0000:80/0000:80:01.0/0000:81:00.1/net/ens1f1np1");
  CHECK(Read(vfs, "/sys/class/net/ens1f1np1/dev_port") == "1\n");
  CHECK(vfs.RealPath("/sys/class/net/ens1f1np1/subsystem").value() == "/sys/class/net");
  // Virtual devices live in /sys/devices/virtual and have no `device` link.
  CHECK(vfs.ReadLink("/sys/class/infiniband/rxe0").value() == "../../devices/virtual/infiniband/rxe0");
  CHECK(vfs.ReadLink("/sys/class/infiniband_verbs/uverbs3").value() ==
        "../../devices/virtual/infiniband_verbs/uverbs3");
  CHECK(vfs.ReadLink("/sys/class/net/veth0").value() == "../../devices/virtual/net/veth0");
  CHECK(vfs.Lstat("/sys/class/infiniband/rxe0/device").error().errnum == ENOENT);
  CHECK(Read(vfs, "/sys/class/infiniband/rxe0/fw_ver") == "\n");
  CHECK(Read(vfs, "/sys/class/infiniband/rxe0/parent") == "veth0\n");
}

TEST_CASE("RDMA class directories list devices in natural name order") {
  // The snapshot sorts by plain name (mlx5_10 before mlx5_2); listings in creation order must
  // follow the kernel's registration order, which natural order approximates.
  auto vfs = SysfsVfs(std::make_shared<const Tree>(Synthesize(testing::SyntheticHost(12)).value()));
  const auto ib_dir = vfs.ReadDir("/sys/class/infiniband");
  const auto verbs_dir = vfs.ReadDir("/sys/class/infiniband_verbs");
  REQUIRE(ib_dir.ok());
  REQUIRE(verbs_dir.ok());
  std::vector<std::string> ib, verbs;
  for (const auto& e : *ib_dir) ib.emplace_back(e.name);
  for (const auto& e : *verbs_dir)
    if (e.name != "abi_version")
      verbs.push_back(Read(vfs, "/sys/class/infiniband_verbs/" + std::string(e.name) + "/ibdev"));
  REQUIRE(ib.size() == 12);
  for (size_t i = 0; i < ib.size(); ++i) {
    CHECK(ib[i] == "mlx5_" + std::to_string(i));
    CHECK(verbs[i] == "mlx5_" + std::to_string(i) + "\n");
  }
}

TEST_CASE("GID tables have kernel semantics for unpopulated entries") {
  SysfsVfs vfs = MiniVfs();
  const std::string port = "/sys/class/infiniband/mlx5_1/ports/1";
  CHECK(vfs.ReadDir(port + "/gids").value().size() == 256);
  CHECK(Read(vfs, port + "/gids/3") == "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
  CHECK(Read(vfs, port + "/gid_attrs/types/3") == "RoCE v2\n");
  CHECK(Read(vfs, port + "/gid_attrs/ndevs/3") == "ens1f0np0\n");
  CHECK(Read(vfs, port + "/gids/200") == "0000:0000:0000:0000:0000:0000:0000:0000\n");
  // Present, listed, but EINVAL on read (rdma_get_gid_attr() on an invalid entry).
  CHECK(vfs.Stat(port + "/gid_attrs/types/200").ok());
  CHECK(vfs.ReadAll(port + "/gid_attrs/types/200").error().errnum == EINVAL);
  CHECK(vfs.ReadAll(port + "/gid_attrs/ndevs/200").error().errnum == EINVAL);
  // IB ports: populated GIDs have no netdev.
  CHECK(Read(vfs, "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0") == "IB/RoCE v1\n");
  CHECK(vfs.ReadAll("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0").error().errnum == EINVAL);
  CHECK(Read(vfs, "/sys/class/infiniband/mlx5_0/ports/1/pkeys/0") == "0xffff\n");
  CHECK(Read(vfs, "/sys/class/infiniband/mlx5_0/ports/1/link_layer") == "InfiniBand\n");
}

TEST_CASE("NUMA is kept as on the host and consistent with every function") {
  SysfsVfs vfs = MiniVfs();
  CHECK(Read(vfs, "/sys/devices/system/node/online") == "0-1\n");
  CHECK(Read(vfs, "/sys/devices/system/node/node1/cpumap") == "f0\n");
  CHECK(Read(vfs, "/sys/devices/system/node/node1/cpulist") == "4-7\n");
  CHECK(Read(vfs, "/sys/devices/system/node/node0/distance") == "10 21\n");
  for (const auto& fn : testing::MiniHost().pci_functions) {
    std::string dir = "/sys/bus/pci/devices/" + fn.bdf.ToString();
    std::string node = Read(vfs, dir + "/numa_node");
    node.pop_back();
    std::string local = Read(vfs, dir + "/local_cpulist");
    CHECK(local == Read(vfs, "/sys/devices/system/node/node" + node + "/cpulist"));
  }
}

TEST_CASE("SR-IOV, GDR markers and passthrough points") {
  SysfsVfs vfs = MiniVfs();
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.2/physfn").value() == "../0000:81:00.0");
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn0").value() == "../0000:81:00.2");
  CHECK(Read(vfs, "/sys/module/nvidia_peermem/version") == "1.1\n");
  CHECK(Read(vfs, "/sys/kernel/mm/memory_peers/nv_mem/version") == "1.1\n");
  CHECK(vfs.Stat("/sys/kernel/mm/memory_peers/nv_mem_nc").error().errnum == ENOENT);
  auto cpu = vfs.Resolve("/sys/devices/system/cpu/cpu0/online");
  REQUIRE(cpu.ok());
  CHECK(cpu->passthrough);
  CHECK(cpu->host_dir == "/sys/devices/system/cpu");
  CHECK(cpu->rest == "cpu0/online");
  CHECK(vfs.ReadAll("/sys/devices/system/cpu/online").error().errnum == EXDEV);

  Snapshot bare = testing::MiniHost();
  bare.peer_memory = {};
  auto tree = Synthesize(bare).value();
  CHECK_FALSE(tree.Find("module/nvidia_peermem").has_value());
  CHECK_FALSE(tree.Find("kernel/mm/memory_peers").has_value());
}

TEST_CASE("A PF's VFs are numbered by one rule, so no two share a virtfn name") {
  // Two VFs of PF 0000:81:00.0 at routing IDs +2 and +3. With sriov_offset 2 and stride 1 the
  // geometry places both; with offset 3 it places only +3 (as virtfn0), so both are numbered
  // in routing-ID order instead (the first fuzz.sysfs_snapshot find: +2 fell back to order,
  // also virtfn0, and the snapshot failed to synthesize with EEXIST).
  auto two_vfs = [](std::string_view offset, std::string_view stride) {
    Snapshot s = testing::MiniHost();
    PciFunction* pf = nullptr;
    std::optional<PciFunction> vf;
    for (auto& fn : s.pci_functions) {
      if (fn.bdf.ToString() == "0000:81:00.0") pf = &fn;
      if (fn.bdf.ToString() == "0000:81:00.2") vf = fn;
    }
    REQUIRE(pf != nullptr);
    REQUIRE(vf.has_value());
    pf->attrs["sriov_numvfs"] = "2";
    pf->attrs["sriov_offset"] = std::string(offset);
    pf->attrs["sriov_stride"] = std::string(stride);
    vf->bdf = ParseBdf("0000:81:00.3").value();
    s.pci_functions.push_back(*vf);
    Canonicalize(&s);
    auto tree = Synthesize(s);
    INFO((tree.ok() ? std::string() : tree.error().ToString()));
    REQUIRE(tree.ok());
    return SysfsVfs(std::make_shared<const Tree>(std::move(*tree)));
  };
  for (auto [offset, stride] : {std::pair{"2", "1"}, std::pair{"3", "1"}, std::pair{"2", "2"}, std::pair{"2", "0"}}) {
    INFO("sriov_offset " << offset << ", sriov_stride " << stride);
    SysfsVfs vfs = two_vfs(offset, stride);
    CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn0").value() == "../0000:81:00.2");
    CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn1").value() == "../0000:81:00.3");
    CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.3/physfn").value() == "../0000:81:00.0");
  }
  // A geometry that places both VFs decides their numbers even against routing-ID order.
  SysfsVfs vfs = two_vfs("1", "1");  // +2 is virtfn1, +3 virtfn2
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn1").value() == "../0000:81:00.2");
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn2").value() == "../0000:81:00.3");
  CHECK(vfs.ReadLink("/sys/bus/pci/devices/0000:81:00.0/virtfn0").error().errnum == ENOENT);
}

TEST_CASE("A config header is synthesized when the snapshot has none") {
  Snapshot s = testing::MiniHost();
  for (auto& fn : s.pci_functions) fn.config.reset();
  auto tree = Synthesize(s);
  REQUIRE(tree.ok());
  SysfsVfs vfs(std::make_shared<const Tree>(std::move(*tree)));
  std::string up = Read(vfs, "/sys/bus/pci/devices/0000:01:00.0/config");
  REQUIRE(up.size() == 64);
  CHECK(static_cast<uint8_t>(up[0x0e]) == 0x01);  // bridge header
  CHECK(static_cast<uint8_t>(up[0x18]) == 0x01);  // primary
  CHECK(static_cast<uint8_t>(up[0x19]) == 0x02);  // secondary
  CHECK(static_cast<uint8_t>(up[0x1a]) == 0x04);  // subordinate: highest bus below
  std::string gpu = Read(vfs, "/sys/bus/pci/devices/0000:04:00.0/config");
  CHECK(static_cast<uint8_t>(gpu[0x0b]) == 0x03);  // class base: display
  CHECK(static_cast<uint8_t>(gpu[0x0e]) == 0x00);
}

// The bus number attributes name a bridge's whole range: a hot-plug port reserves buses it has
// no children on yet, and a selection may drop the bridges that used the top of a range.
TEST_CASE("A synthesized config header keeps the bus range the attributes give") {
  Snapshot s = testing::MiniHost();
  for (auto& fn : s.pci_functions) {
    fn.config.reset();
    if (fn.bdf.ToString() == "0000:01:00.0") {
      fn.attrs["secondary_bus_number"] = "2";
      fn.attrs["subordinate_bus_number"] = "31";
    }
    if (fn.bdf.ToString() == "0000:02:01.0") fn.attrs["subordinate_bus_number"] = "9";
  }
  auto tree = Synthesize(s);
  REQUIRE(tree.ok());
  SysfsVfs vfs(std::make_shared<const Tree>(std::move(*tree)));
  std::string up = Read(vfs, "/sys/bus/pci/devices/0000:01:00.0/config");
  CHECK(static_cast<uint8_t>(up[0x19]) == 0x02);
  CHECK(static_cast<uint8_t>(up[0x1a]) == 31);
  std::string down = Read(vfs, "/sys/bus/pci/devices/0000:02:01.0/config");
  CHECK(static_cast<uint8_t>(down[0x19]) == 0x04);  // its child's bus
  CHECK(static_cast<uint8_t>(down[0x1a]) == 0x09);
}

TEST_CASE("An invalid snapshot is refused before anything is built") {
  Snapshot s = testing::MiniHost();
  s.rdma_devices[0].pci = ParseBdf("0000:99:00.0").value();
  auto tree = Synthesize(s);
  REQUIRE_FALSE(tree.ok());
  CHECK(tree.error().errnum == ENOENT);
}

}  // namespace
}  // namespace rxp::sysfs
