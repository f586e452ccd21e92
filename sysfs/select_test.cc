#include "sysfs/select.h"

#include <catch2/catch.hpp>

#include "sysfs/testing/hosts.h"

namespace rxp::sysfs {
namespace {

using testing::Bdfs;

std::vector<std::string> Names(const auto& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.name);
  return out;
}

TEST_CASE("Selecting nothing in particular keeps the snapshot as it is") {
  Snapshot host = testing::MiniHost();
  auto s = Select(host, {});
  REQUIRE(s.ok());
  CHECK(SerializeSnapshot(*s) == SerializeSnapshot(host));
}

TEST_CASE("Selecting a device keeps its netdevs and the GPUs, not other NICs") {
  Snapshot host = testing::MiniHost();
  // A NIC with no RDMA device (a gVNIC, say) on the GPU's root port's bus.
  Netdev gvnic;
  gvnic.name = "eth9";
  host.netdevs.push_back(gvnic);
  Canonicalize(&host);
  SelectOptions o;
  o.devices = std::vector<std::string>{"mlx5_0"};
  auto s = Select(host, o);
  REQUIRE(s.ok());
  CHECK(Names(s->rdma_devices) == std::vector<std::string>{"mlx5_0"});
  CHECK(Names(s->netdevs) == std::vector<std::string>{"ibp3s0"});
  CHECK(Bdfs(*s) == std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:02:01.0",
                                             "0000:03:00.0", "0000:04:00.0", "0000:80:02.0", "0000:82:00.0"});
  // Without naming devices, NICs that have no RDMA device stay (a GKE host's gVNICs).
  auto all = Select(host, {}).value();
  CHECK(Names(all.netdevs) == std::vector<std::string>{"ens1f0np0", "ens1f0v0", "ens1f1np1", "eth9", "ibp3s0", "veth0"});
  o.devices = std::vector<std::string>{"mlx5_7"};
  CHECK_THAT(Select(host, o).error().reason, Catch::Contains("no RDMA device 'mlx5_7'"));
}

// AMD MI300X (processing accelerator, 0x1200) and MI250X (other display controller, 0x0380)
// are GPUs a sandbox's RCCL pairs with its NICs: kept like an NVIDIA 3D controller.
TEST_CASE("Selecting a device keeps accelerators that are not VGA") {
  for (const char* cls : {"0x120000", "0x038000"}) {
    Snapshot host = testing::MiniHost();
    for (auto& fn : host.pci_functions)
      if (fn.bdf.ToString() == "0000:82:00.0") {
        fn.attrs["class"] = cls;
        fn.attrs["vendor"] = "0x1002";
      }
    SelectOptions o;
    o.devices = std::vector<std::string>{"mlx5_0"};
    auto s = Select(host, o);
    REQUIRE(s.ok());
    const auto kept = Bdfs(*s);
    CHECK(std::find(kept.begin(), kept.end(), "0000:82:00.0") != kept.end());
  }
}

TEST_CASE("A kept root complex keeps its non-PCI parent") {
  Snapshot host = testing::MiniHost();
  host.pci_root_parents["0000:80"] = "VMBUS:00/00000080-0000-0000-0000-000000000080";
  SelectOptions o;
  o.devices = std::vector<std::string>{"mlx5_0"};
  auto s = Select(host, o);
  REQUIRE(s.ok());
  CHECK(s->pci_root_parents == host.pci_root_parents);
  CHECK(Validate(*s).ok());
}

TEST_CASE("A VF brings its PF along, function 1 brings function 0") {
  Snapshot host = testing::MiniHost();
  SelectOptions o;
  o.devices = std::vector<std::string>{};
  o.netdevs = std::vector<std::string>{"ens1f0v0"};
  auto s = Select(host, o);
  REQUIRE(s.ok());
  CHECK(s->FindPci(ParseBdf("0000:81:00.2").value())->physfn == ParseBdf("0000:81:00.0").value());
  CHECK(s->FindPci(ParseBdf("0000:81:00.0").value()) != nullptr);
  CHECK(s->FindPci(ParseBdf("0000:81:00.1").value()) == nullptr);
}

TEST_CASE("drop_gidless drops RoCE devices whose GIDs are on netdevs the sandbox lacks") {
  Snapshot host = testing::MiniHost();
  SelectOptions o;
  o.netdevs = std::vector<std::string>{"ens1f0np0", "ibp3s0"};  // not ens1f1np1, not veth0
  o.drop_gidless = true;
  auto s = Select(host, o);
  REQUIRE(s.ok());
  // mlx5_0 is IB (GIDs need no netdev); mlx5_1's GIDs are on ens1f0np0; mlx5_2's and rxe0's
  // netdevs are not in the sandbox.
  CHECK(Names(s->rdma_devices) == std::vector<std::string>{"mlx5_0", "mlx5_1"});
  CHECK(s->FindPci(ParseBdf("0000:81:00.1").value()) == nullptr);
  // Without the option, the same netdev choice keeps every device.
  o.drop_gidless = false;
  CHECK(Select(host, o).value().rdma_devices.size() == 4);
}

TEST_CASE("drop_gidless keeps a netdev named in netdevs, on its NIC function") {
  Snapshot host = testing::MiniHost();
  // mlx5_2's GIDs name a netdev outside the snapshot (another namespace's), so it is gidless;
  // ens1f1np1, on its function, is named.
  for (auto& gid : host.rdma_devices[2].ports[0].gids)
    if (gid.ndev) gid.ndev = "eth9";
  REQUIRE(host.rdma_devices[2].name == "mlx5_2");
  SelectOptions o;
  o.netdevs = std::vector<std::string>{"ens1f0np0", "ens1f1np1"};
  o.drop_gidless = true;
  auto s = Select(host, o);
  REQUIRE(s.ok());
  CHECK(s->FindRdma("mlx5_2") == nullptr);
  CHECK(s->FindNetdev("ens1f1np1") != nullptr);
  CHECK(s->FindPci(ParseBdf("0000:81:00.1").value()) != nullptr);
  // Not named: dropped with the device's function, as before.
  o.netdevs.reset();
  o.devices = std::vector<std::string>{"mlx5_1", "mlx5_2"};
  auto t = Select(host, o);
  REQUIRE(t.ok());
  CHECK(t->FindRdma("mlx5_2") == nullptr);
  CHECK(t->FindNetdev("ens1f1np1") == nullptr);
  CHECK(t->FindPci(ParseBdf("0000:81:00.1").value()) == nullptr);
}

TEST_CASE("Renumbering compacts uverbs names and remembers the host device") {
  Snapshot host = testing::MiniHost();
  SelectOptions o;
  o.devices = std::vector<std::string>{"rxe0", "mlx5_2"};
  o.renumber = true;
  auto s = Select(host, o);
  REQUIRE(s.ok());
  const Uverbs& mlx = *s->FindRdma("mlx5_2")->uverbs;
  const Uverbs& rxe = *s->FindRdma("rxe0")->uverbs;
  CHECK(mlx.name == "uverbs0");
  CHECK(mlx.host_name == "uverbs2");
  CHECK(mlx.dev.ToString() == "231:194");  // the host node, renamed
  CHECK(rxe.name == "uverbs1");
  CHECK(rxe.host_name == "uverbs3");
  o.uverbs_dev_base = DevNum{240, 0};
  auto t = Select(host, o).value();
  CHECK(t.FindRdma("mlx5_2")->uverbs->dev.ToString() == "240:0");
  CHECK(t.FindRdma("rxe0")->uverbs->dev.ToString() == "240:1");
  CHECK(t.FindRdma("rxe0")->uverbs->host_dev->ToString() == "231:195");
  // Renumbering a renumbered snapshot keeps pointing at the real host device.
  SelectOptions again;
  again.devices = std::vector<std::string>{"rxe0"};
  again.renumber = true;
  auto u = Select(t, again).value();
  CHECK(u.FindRdma("rxe0")->uverbs->name == "uverbs0");
  CHECK(u.FindRdma("rxe0")->uverbs->host_name == "uverbs3");
}

TEST_CASE("uverbs_names gives each kept device the embedder's sandbox name on the host node") {
  Snapshot host = testing::MiniHost();
  SelectOptions o;
  o.devices = std::vector<std::string>{"rxe0", "mlx5_2"};
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}, {"mlx5_2", "uverbs7"}};
  auto s = Select(host, o);
  REQUIRE(s.ok());
  const Uverbs& rxe = *s->FindRdma("rxe0")->uverbs;
  const Uverbs& mlx = *s->FindRdma("mlx5_2")->uverbs;
  CHECK(rxe.name == "uverbs0");
  CHECK(rxe.host_name == "uverbs3");
  CHECK(rxe.dev.ToString() == "231:195");  // the host node's number, whatever the name
  CHECK(mlx.name == "uverbs7");
  CHECK(mlx.host_name == "uverbs2");
  CHECK(mlx.dev.ToString() == "231:194");
  // A renumbered snapshot with its own device numbers: renaming points back at the host node.
  SelectOptions renumber;
  renumber.renumber = true;
  renumber.uverbs_dev_base = DevNum{240, 0};
  Snapshot renumbered = Select(host, renumber).value();
  REQUIRE(renumbered.FindRdma("rxe0")->uverbs->dev.ToString() == "240:3");
  SelectOptions rename;
  rename.devices = std::vector<std::string>{"rxe0"};
  rename.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs1"}};
  auto t = Select(renumbered, rename).value();
  CHECK(t.FindRdma("rxe0")->uverbs->name == "uverbs1");
  CHECK(t.FindRdma("rxe0")->uverbs->host_name == "uverbs3");
  CHECK(t.FindRdma("rxe0")->uverbs->dev.ToString() == "231:195");
}

TEST_CASE("uverbs_names refuses missing, unselected, duplicate and malformed names") {
  Snapshot host = testing::MiniHost();
  SelectOptions o;
  o.devices = std::vector<std::string>{"rxe0", "mlx5_2"};
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}};
  CHECK_THAT(Select(host, o).error().reason, Catch::Contains("no sandbox uverbs name for RDMA device 'mlx5_2'"));
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}, {"mlx5_2", "uverbs0"}};
  CHECK(Select(host, o).error().errnum == EEXIST);
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}, {"mlx5_2", "../uverbs1"}};
  CHECK_FALSE(Select(host, o).ok());
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}, {"mlx5_2", "uverbs1"}, {"mlx5_0", "uverbs2"}};
  CHECK_THAT(Select(host, o).error().reason, Catch::Contains("'mlx5_0', which is not selected"));
  o.uverbs_names = std::map<std::string, std::string>{{"rxe0", "uverbs0"}, {"mlx5_2", "uverbs1"}};
  o.renumber = true;
  CHECK(Select(host, o).error().errnum == EINVAL);
  o.renumber = false;
  CHECK(Select(host, o).ok());
}

}  // namespace
}  // namespace rxp::sysfs
