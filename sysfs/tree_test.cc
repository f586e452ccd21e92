#include "sysfs/tree.h"

#include <catch2/catch.hpp>

namespace rxp::sysfs {
namespace {

TEST_CASE("Links are spelled like sysfs_get_target_path()") {
  Tree t;
  NodeId bdf = t.MkdirAll("devices/pci0000:00/0000:00:01.0/0000:01:00.0").value();
  NodeId ib = t.MkdirAll("devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0").value();
  NodeId cls = t.MkdirAll("class/infiniband").value();
  NodeId bus = t.MkdirAll("devices/pci0000:00/0000:00:01.0/pci_bus/0000:01").value();
  NodeId busclass = t.MkdirAll("class/pci_bus").value();
  NodeId root = t.Find("devices/pci0000:00").value();
  NodeId rootbus = t.MkdirAll("devices/pci0000:00/pci_bus/0000:00").value();
  NodeId pcibus = t.MkdirAll("bus/pci").value();
  NodeId pcidevs = t.MkdirAll("bus/pci/devices").value();

  // The observed kernel layout (see docs/sysfs.md).
  CHECK(t.RelativeTarget(cls, ib) ==
        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0");
  CHECK(t.RelativeTarget(ib, bdf) == "../../../0000:01:00.0");
  CHECK(t.RelativeTarget(busclass, bus) == "../../devices/pci0000:00/0000:00:01.0/pci_bus/0000:01");
  CHECK(t.RelativeTarget(rootbus, root) == "../../../pci0000:00");
  CHECK(t.RelativeTarget(rootbus, busclass) == "../../../../class/pci_bus");
  CHECK(t.RelativeTarget(bdf, pcibus) == "../../../../bus/pci");
  CHECK(t.RelativeTarget(pcidevs, bdf) == "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");

  REQUIRE(t.Link(cls, "mlx5_0", ib).ok());
  CHECK(t.node(t.Find("class/infiniband/mlx5_0").value()).kind == NodeKind::kSymlink);
  CHECK(t.PathOf(ib) == "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0");
}

TEST_CASE("Names and link targets cannot escape the tree") {
  Tree t;
  NodeId d = t.MkdirAll("class/net").value();
  CHECK(t.AddFile(d, "..", "x").error().errnum == EINVAL);
  CHECK(t.AddFile(d, "a/b", "x").error().errnum == EINVAL);
  CHECK(t.AddSymlink(d, "l", "/etc/passwd").error().errnum == EINVAL);
  CHECK(t.AddSymlink(d, "l", "../../../etc").error().errnum == EXDEV);
  CHECK(t.AddSymlink(d, "l", "../../devices/./x").error().errnum == EINVAL);
  CHECK(t.AddSymlink(d, "l", "../../devices//x").error().errnum == EINVAL);
  CHECK(t.AddSymlink(d, "l", "../../devices/x").ok());
  CHECK(t.AddSymlink(d, "l", "../x").error().errnum == EEXIST);
  NodeId f = t.AddFile(d, "f", "1\n").value();
  CHECK(t.AddFile(f, "g", "").error().errnum == ENOTDIR);
  CHECK(t.MkdirAll("class/net/f/x").error().errnum == ENOTDIR);
}

TEST_CASE("Directory entries keep creation order and are found by name") {
  Tree t;
  NodeId d = t.MkdirAll("x").value();
  for (const char* n : {"b", "a", "c"}) REQUIRE(t.AddFile(d, n, n).ok());
  std::vector<std::string> names;
  for (NodeId id : t.Children(d)) names.push_back(t.node(id).name);
  CHECK(names == std::vector<std::string>{"b", "a", "c"});
  // Many entries (the directory is indexed past 16, and the index is rebuilt as it grows):
  // every one is found, by its own node, and a second entry of a name is refused at any size.
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "n" + std::to_string(i);
    auto id = t.AddFile(d, name, name);
    REQUIRE(id.ok());
    if (i % 97 == 0) CHECK(t.AddFile(d, name, "again").error().errnum == EEXIST);
  }
  CHECK(t.node(t.Child(d, "a").value()).data == "a");
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "n" + std::to_string(i);
    auto c = t.Child(d, name);
    REQUIRE(c.has_value());
    CHECK(t.node(*c).data == name);
  }
  CHECK(t.Children(d).size() == 5003);
  CHECK(t.node(t.Children(d)[3]).name == "n0");
  for (const char* missing : {"zz", "n5000", "n", "", "n49999"}) CHECK_FALSE(t.Child(d, missing).has_value());
}

}  // namespace
}  // namespace rxp::sysfs
