#include "sysfs/topo_matrix.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "sysfs/testing/hosts.h"

namespace rxp::sysfs {
namespace {

Bdf B(const char* s) { return ParseBdf(s).value(); }

TEST_CASE("Path classes follow the PCI nesting") {
  Snapshot s = testing::MiniHost();
  // GPU and NIC on two downstream ports of one switch.
  CHECK(PciPathType(s, B("0000:04:00.0"), B("0000:03:00.0")) == PathType::kPix);
  // Two functions of one NIC under a root port.
  CHECK(PciPathType(s, B("0000:81:00.0"), B("0000:81:00.1")) == PathType::kPix);
  // Different root complexes on different NUMA nodes.
  CHECK(PciPathType(s, B("0000:04:00.0"), B("0000:81:00.0")) == PathType::kSys);
  // Root ports 80:01.0 and 80:02.0 share root complex pci0000:80.
  CHECK(PciPathType(s, B("0000:82:00.0"), B("0000:81:00.0")) == PathType::kPhb);
  CHECK(PciPathType(s, B("0000:82:00.0"), B("0000:82:00.0")) == PathType::kSelf);
  CHECK(PciPathType(s, B("0000:82:00.0"), B("0000:99:00.0")) == PathType::kNone);
}

TEST_CASE("Two switch levels are PXB, separate host bridges on one node are NODE") {
  Snapshot s = testing::MiniHost();
  // Put a second switch level above the NIC: 02:00.0 -> 03:00.0 becomes a switch upstream
  // port whose downstream port 04:... hosts a new NIC.
  auto nic = *s.FindPci(B("0000:03:00.0"));
  PciFunction up = nic, down = nic, leaf = nic;
  up.bdf = B("0000:05:00.0");
  up.parent = B("0000:02:00.0");
  // Re-home: GPU stays at 04:00.0 under 02:01.0; a second NIC behind two switches.
  up.attrs["class"] = "0x060400";
  up.config.reset();
  down.bdf = B("0000:06:00.0");
  down.parent = up.bdf;
  down.attrs["class"] = "0x060400";
  down.config.reset();
  leaf.bdf = B("0000:07:00.0");
  leaf.parent = down.bdf;
  leaf.config.reset();
  // 02:00.0 now has children on bus 03 (the NIC) and 05: give the new chain its own port.
  PciFunction port = *s.FindPci(B("0000:02:01.0"));
  port.bdf = B("0000:02:02.0");
  port.config.reset();
  up.parent = port.bdf;
  for (auto* f : {&up, &down, &leaf, &port}) s.pci_functions.push_back(*f);
  // A root complex pci0000:40 on node 0.
  PciFunction rp = *s.FindPci(B("0000:00:01.0"));
  rp.bdf = B("0000:40:01.0");
  rp.config.reset();
  PciFunction far = *s.FindPci(B("0000:04:00.0"));
  far.bdf = B("0000:41:00.0");
  far.parent = rp.bdf;
  far.config.reset();
  s.pci_functions.push_back(rp);
  s.pci_functions.push_back(far);
  Canonicalize(&s);
  REQUIRE(Validate(s).ok());
  CHECK(PciPathType(s, B("0000:04:00.0"), B("0000:07:00.0")) == PathType::kPxb);
  CHECK(PciPathType(s, B("0000:03:00.0"), B("0000:07:00.0")) == PathType::kPxb);
  CHECK(PciPathType(s, B("0000:41:00.0"), B("0000:04:00.0")) == PathType::kNode);
}

TEST_CASE("The matrix prints like nvidia-smi topo -m") {
  TopoMatrix m = BuildTopoMatrix(testing::MiniHost());
  std::vector<std::string> labels;
  for (const auto& e : m.endpoints) labels.push_back(e.label + "=" + e.name);
  CHECK(labels == std::vector<std::string>{"GPU0=0000:04:00.0", "GPU1=0000:82:00.0", "NIC0=ens1f0v0",
                                           "NIC1=mlx5_0", "NIC2=mlx5_1", "NIC3=mlx5_2", "NIC4=rxe0"});
  std::string text = FormatTopoMatrix(m);
  // GPU0 row: X, SYS to GPU1, SYS to the VF, PIX to mlx5_0, SYS to mlx5_1/2, N/A to rxe0.
  CHECK_THAT(text, Catch::Contains("GPU0  X     SYS   SYS   PIX   SYS   SYS   N/A   0-3           0\n"));
  CHECK_THAT(text, Catch::Contains("GPU1  SYS   X     PHB   SYS   PHB   PHB   N/A   4-7           1\n"));
  CHECK_THAT(text, Catch::Contains("NIC4  N/A   N/A   N/A   N/A   N/A   N/A   X     N/A           N/A\n"));
  CHECK_THAT(text, Catch::Contains("  NIC1: mlx5_0 (0000:03:00.0)"));
  CHECK_THAT(text, Catch::Contains("PIX  = Connection traversing at most a single PCIe bridge"));
}

// The cells grow with the square of the endpoints: past kMaxMatrixEndpoints they are listed,
// one line each, so a snapshot of thousands of GPUs prints in linear time and space.
TEST_CASE("Too many endpoints for a matrix are listed with their affinity") {
  const Snapshot big = testing::SyntheticHost(kMaxMatrixEndpoints);  // a GPU and a NIC per slot
  const TopoMatrix m = BuildTopoMatrix(big);
  REQUIRE(m.endpoints.size() > kMaxMatrixEndpoints);
  CHECK(m.cells.empty());
  const std::string text = FormatTopoMatrix(m);
  CHECK_THAT(text, Catch::Contains("more than the 256 a matrix is printed for"));
  CHECK(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) ==
        m.endpoints.size() + 3);
  CHECK_THAT(text, Catch::Contains("GPU0      "));
  const TopoMatrix small = BuildTopoMatrix(testing::SyntheticHost(kMaxMatrixEndpoints / 2));
  CHECK(small.cells.size() == small.endpoints.size());
}

// AMD's datacenter GPUs are no VGA: MI300X is a processing accelerator (0x1200), MI250X an
// "other" display controller (0x0380). Both are GPUs of the matrix; an integrated Intel VGA is
// not.
TEST_CASE("Processing accelerators and other display controllers are matrix GPUs") {
  auto with_gpu1 = [](const char* cls, const char* vendor) {
    Snapshot host = testing::MiniHost();
    for (auto& fn : host.pci_functions)
      if (fn.bdf.ToString() == "0000:82:00.0") {
        fn.attrs["class"] = cls;
        fn.attrs["vendor"] = vendor;
      }
    std::vector<std::string> gpus;
    for (const auto& e : BuildTopoMatrix(host).endpoints)
      if (e.label.starts_with("GPU")) gpus.push_back(e.name);
    return gpus;
  };
  const std::vector<std::string> both{"0000:04:00.0", "0000:82:00.0"};
  CHECK(with_gpu1("0x120000", "0x1002") == both);  // MI300X
  CHECK(with_gpu1("0x038000", "0x1002") == both);  // MI250X
  CHECK(with_gpu1("0x120000", "0x1da3") == both);  // Gaudi2
  CHECK(with_gpu1("0x030000", "0x8086") == std::vector<std::string>{"0000:04:00.0"});
  CHECK(with_gpu1("0x030000", "0x1a03") == std::vector<std::string>{"0000:04:00.0"});  // BMC
  CHECK(IsGpuClass(0x120000));
  CHECK(IsGpuClass(0x038000));
  CHECK_FALSE(IsGpuClass(0x020000));
  CHECK_FALSE(IsGpuClass(0x120100));  // 0x1201: an FPGA accelerator class of its own
}

}  // namespace
}  // namespace rxp::sysfs
