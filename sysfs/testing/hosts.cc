#include "sysfs/testing/hosts.h"

#include <fmt/format.h>

#include <cstring>

#include "sysfs/cpuset.h"

namespace rxp::sysfs::testing {
namespace {

Bdf B(const char* text) { return ParseBdf(text).value(); }

// A 64-byte config space header for a function, as hwloc reads it.
std::array<uint8_t, 64> Config(uint16_t vendor, uint16_t device, uint32_t cls, bool bridge,
                               uint8_t primary = 0, uint8_t secondary = 0, uint8_t subordinate = 0) {
  std::array<uint8_t, 64> c{};
  c[0x00] = static_cast<uint8_t>(vendor);
  c[0x01] = static_cast<uint8_t>(vendor >> 8);
  c[0x02] = static_cast<uint8_t>(device);
  c[0x03] = static_cast<uint8_t>(device >> 8);
  c[0x04] = 0x06;  // memory + bus master
  c[0x06] = 0x10;  // capability list
  c[0x08] = 0x00;  // revision
  c[0x09] = static_cast<uint8_t>(cls);
  c[0x0a] = static_cast<uint8_t>(cls >> 8);
  c[0x0b] = static_cast<uint8_t>(cls >> 16);
  c[0x0e] = bridge ? 0x01 : 0x00;
  if (bridge) {
    c[0x18] = primary;
    c[0x19] = secondary;
    c[0x1a] = subordinate;
  }
  c[0x34] = 0x40;
  return c;
}

struct NodeCpus {
  std::string mask;
  std::string list;
};

PciFunction Fn(const char* bdf, std::optional<Bdf> parent, uint16_t vendor, uint16_t device,
               uint32_t cls, int numa, const NodeCpus& cpus, const char* speed, int width) {
  PciFunction fn;
  fn.bdf = B(bdf);
  fn.parent = parent;
  fn.attrs["class"] = fmt::format("0x{:06x}", cls);
  fn.attrs["vendor"] = fmt::format("0x{:04x}", vendor);
  fn.attrs["device"] = fmt::format("0x{:04x}", device);
  fn.attrs["subsystem_vendor"] = fmt::format("0x{:04x}", vendor);
  fn.attrs["subsystem_device"] = "0x0000";
  fn.attrs["revision"] = "0x00";
  fn.attrs["numa_node"] = fmt::format("{}", numa);
  fn.attrs["local_cpus"] = cpus.mask;
  fn.attrs["local_cpulist"] = cpus.list;
  fn.attrs["max_link_speed"] = speed;
  fn.attrs["max_link_width"] = fmt::format("{}", width);
  fn.attrs["current_link_speed"] = speed;
  fn.attrs["current_link_width"] = fmt::format("{}", width);
  fn.attrs["modalias"] = fmt::format("pci:v{:08X}d{:08X}sv{:08X}sd00000000bc{:02X}sc{:02X}i{:02X}",
                                     vendor, device, vendor, cls >> 16, (cls >> 8) & 0xff, cls & 0xff);
  fn.config = Config(vendor, device, cls, false);
  return fn;
}

void MakeBridge(PciFunction* fn, uint8_t secondary, uint8_t subordinate) {
  auto cls = PciClass(*fn).value();
  uint16_t vendor = static_cast<uint16_t>(ParseHex("v", *fn->attrs["vendor"], 0xffff).value());
  uint16_t device = static_cast<uint16_t>(ParseHex("d", *fn->attrs["device"], 0xffff).value());
  fn->config = Config(vendor, device, cls, true, fn->bdf.bus, secondary, subordinate);
  fn->driver = "pcieport";
}

Port IbPort(uint32_t gid_len, const std::string& guid_suffix, bool active) {
  Port p;
  p.number = 1;
  p.attrs["state"] = active ? "4: ACTIVE" : "1: DOWN";
  p.attrs["phys_state"] = active ? "5: LinkUp" : "2: Polling";
  p.attrs["rate"] = "400 Gb/sec (4X NDR)";
  p.attrs["lid"] = "0x12";
  p.attrs["lid_mask_count"] = "0";
  p.attrs["sm_lid"] = "0x1";
  p.attrs["sm_sl"] = "0";
  p.attrs["cap_mask"] = "0xa751e84a";
  p.attrs["link_layer"] = "InfiniBand";
  p.gid_table_len = gid_len;
  p.gids.push_back(Gid{0, "fe80:0000:0000:0000:" + guid_suffix, "IB/RoCE v1", std::nullopt});
  for (int i = 0; i < 4; ++i) p.pkeys.push_back(i == 0 ? "0xffff" : "0x0000");
  return p;
}

Port RocePort(const std::string& ndev, const std::string& guid_suffix, const std::string& ipv4_hex) {
  Port p;
  p.number = 1;
  p.attrs["state"] = "4: ACTIVE";
  p.attrs["phys_state"] = "5: LinkUp";
  p.attrs["rate"] = "100 Gb/sec (4X EDR)";
  p.attrs["lid"] = "0x0";
  p.attrs["lid_mask_count"] = "0";
  p.attrs["sm_lid"] = "0x0";
  p.attrs["sm_sl"] = "0";
  p.attrs["cap_mask"] = "0x00010000";
  p.attrs["link_layer"] = "Ethernet";
  p.gid_table_len = 256;
  std::string ll = "fe80:0000:0000:0000:" + guid_suffix;
  std::string v4 = "0000:0000:0000:0000:0000:ffff:" + ipv4_hex;
  p.gids = {Gid{0, ll, "IB/RoCE v1", ndev}, Gid{1, ll, "RoCE v2", ndev},
            Gid{2, v4, "IB/RoCE v1", ndev}, Gid{3, v4, "RoCE v2", ndev}};
  p.pkeys = {"0xffff"};
  return p;
}

RdmaDevice Ib(const char* name, std::optional<Bdf> pci, const char* guid, uint32_t uverbs,
              const char* hca, const char* board) {
  RdmaDevice d;
  d.name = name;
  d.pci = pci;
  d.attrs["node_type"] = "1: CA";
  d.attrs["node_guid"] = guid;
  d.attrs["sys_image_guid"] = guid;
  d.attrs["fw_ver"] = "28.39.1002";
  d.attrs["hca_type"] = hca;
  d.attrs["hw_rev"] = "0x0";
  d.attrs["board_id"] = board;
  d.attrs["node_desc"] = fmt::format("host01 {}", name);
  d.uverbs = Uverbs{fmt::format("uverbs{}", uverbs), DevNum{231, 192 + uverbs}, 1u, std::nullopt, std::nullopt};
  return d;
}

Netdev Net(const char* name, std::optional<Bdf> pci, const char* mac, const char* type,
           const char* speed, int ifindex) {
  Netdev n;
  n.name = name;
  n.pci = pci;
  n.attrs["address"] = mac;
  n.attrs["addr_len"] = std::string(type) == "32" ? "20" : "6";
  n.attrs["type"] = type;
  n.attrs["dev_id"] = "0x0";
  n.attrs["dev_port"] = "0";
  n.attrs["mtu"] = std::string(type) == "32" ? "4092" : "9000";
  n.attrs["speed"] = speed;
  n.attrs["operstate"] = "up";
  n.attrs["carrier"] = "1";
  n.attrs["ifindex"] = fmt::format("{}", ifindex);
  return n;
}

}  // namespace

Snapshot MiniHost() {
  Snapshot s;
  s.comment = "MiniHost: sysfs/testing/hosts.cc";
  s.verbs_abi_version = 6;
  NodeCpus n0{"0f", "0-3"}, n1{"f0", "4-7"};
  Numa numa;
  numa.attrs = {{"online", "0-1"}, {"possible", "0-1"}, {"has_cpu", "0-1"}, {"has_memory", "0-1"}};
  numa.nodes = {NumaNode{0, "0f", "0-3", "10 21"}, NumaNode{1, "f0", "4-7", "21 10"}};
  s.numa = numa;

  const char* gen5 = "32.0 GT/s PCIe";
  auto rp0 = Fn("0000:00:01.0", std::nullopt, 0x8086, 0x352a, 0x060400, 0, n0, gen5, 16);
  MakeBridge(&rp0, 0x01, 0x04);
  auto up = Fn("0000:01:00.0", B("0000:00:01.0"), 0x1000, 0xc030, 0x060400, 0, n0, gen5, 16);
  MakeBridge(&up, 0x02, 0x04);
  auto dn0 = Fn("0000:02:00.0", B("0000:01:00.0"), 0x1000, 0xc030, 0x060400, 0, n0, gen5, 16);
  MakeBridge(&dn0, 0x03, 0x03);
  auto dn1 = Fn("0000:02:01.0", B("0000:01:00.0"), 0x1000, 0xc030, 0x060400, 0, n0, gen5, 16);
  MakeBridge(&dn1, 0x04, 0x04);
  auto nic0 = Fn("0000:03:00.0", B("0000:02:00.0"), 0x15b3, 0x1021, 0x020700, 0, n0, gen5, 16);
  nic0.driver = "mlx5_core";
  nic0.attrs["uevent"] = "DRIVER=mlx5_core\nPCI_CLASS=20700\nPCI_ID=15B3:1021\nPCI_SUBSYS_ID=15B3:0041\nPCI_SLOT_NAME=0000:03:00.0\nMODALIAS=pci:v000015B3d00001021sv000015B3sd00000041bc02sc07i00";
  auto gpu0 = Fn("0000:04:00.0", B("0000:02:01.0"), 0x10de, 0x2330, 0x030200, 0, n0, gen5, 16);
  gpu0.driver = "nvidia";
  auto rp1 = Fn("0000:80:01.0", std::nullopt, 0x8086, 0x352a, 0x060400, 1, n1, "16.0 GT/s PCIe", 16);
  MakeBridge(&rp1, 0x81, 0x81);
  auto pf0 = Fn("0000:81:00.0", B("0000:80:01.0"), 0x15b3, 0x101d, 0x020000, 1, n1, "16.0 GT/s PCIe", 16);
  pf0.driver = "mlx5_core";
  pf0.attrs["sriov_numvfs"] = "1";
  pf0.attrs["sriov_totalvfs"] = "8";
  auto pf1 = Fn("0000:81:00.1", B("0000:80:01.0"), 0x15b3, 0x101d, 0x020000, 1, n1, "16.0 GT/s PCIe", 16);
  pf1.driver = "mlx5_core";
  auto vf = Fn("0000:81:00.2", B("0000:80:01.0"), 0x15b3, 0x101e, 0x020000, 1, n1, "Unknown", 255);
  vf.physfn = B("0000:81:00.0");
  vf.driver = "mlx5_core";
  auto rp2 = Fn("0000:80:02.0", std::nullopt, 0x8086, 0x352a, 0x060400, 1, n1, gen5, 16);
  MakeBridge(&rp2, 0x82, 0x82);
  auto gpu1 = Fn("0000:82:00.0", B("0000:80:02.0"), 0x10de, 0x2330, 0x030200, 1, n1, gen5, 16);
  gpu1.driver = "nvidia";
  s.pci_functions = {rp0, up, dn0, dn1, nic0, gpu0, rp1, pf0, pf1, vf, rp2, gpu1};

  auto mlx0 = Ib("mlx5_0", B("0000:03:00.0"), "b83f:d203:00a1:b2c4", 0, "MT4129", "MT_0000000838");
  mlx0.ports = {IbPort(128, "b83f:d203:00a1:b2c4", true)};
  auto mlx1 = Ib("mlx5_1", B("0000:81:00.0"), "0c42:a103:0065:4e20", 1, "MT4125", "MT_0000000359");
  mlx1.ports = {RocePort("ens1f0np0", "0e42:a1ff:fe65:4e20", "0a00:0001")};
  auto mlx2 = Ib("mlx5_2", B("0000:81:00.1"), "0c42:a103:0065:4e21", 2, "MT4125", "MT_0000000359");
  mlx2.ports = {RocePort("ens1f1np1", "0e42:a1ff:fe65:4e21", "0a00:0101")};
  RdmaDevice rxe;
  rxe.name = "rxe0";
  rxe.attrs = {{"node_type", "1: CA"}, {"node_guid", "9480:6cff:fe77:0f8d"},
               {"sys_image_guid", "9480:6cff:fe77:0f8d"}, {"fw_ver", ""}, {"node_desc", "rxe"},
               {"parent", "veth0"}};
  rxe.ports = {RocePort("veth0", "9480:6cff:fe77:0f8d", "0a63:0001")};
  rxe.ports[0].gid_table_len = 1024;
  rxe.uverbs = Uverbs{"uverbs3", DevNum{231, 195}, 2u, std::nullopt, std::nullopt};
  s.rdma_devices = {mlx0, mlx1, mlx2, rxe};

  auto ib0 = Net("ibp3s0", B("0000:03:00.0"), "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:a1:b2:c4", "32", "400000", 4);
  auto e0 = Net("ens1f0np0", B("0000:81:00.0"), "0c:42:a1:65:4e:20", "1", "100000", 5);
  auto e1 = Net("ens1f1np1", B("0000:81:00.1"), "0c:42:a1:65:4e:21", "1", "100000", 6);
  e1.attrs["dev_port"] = "1";
  auto veth = Net("veth0", std::nullopt, "96:80:6c:77:0f:8d", "1", "10000", 7);
  // The VF's netdev is down: its speed and duplex fail with EINVAL, as the kernel's do.
  auto vfnet = Net("ens1f0v0", B("0000:81:00.2"), "de:ad:be:ef:00:01", "1", "", 8);
  vfnet.attrs["speed"] = std::nullopt;
  vfnet.attrs["duplex"] = std::nullopt;
  vfnet.attrs["operstate"] = "down";
  vfnet.attrs["carrier"] = std::nullopt;
  s.netdevs = {e0, e1, ib0, veth, vfnet};
  s.peer_memory.nvidia_peermem = "1.1";
  s.peer_memory.nv_mem = "1.1";
  Canonicalize(&s);
  return s;
}

std::vector<std::string> Bdfs(const Snapshot& snapshot) {
  std::vector<std::string> out;
  for (const auto& f : snapshot.pci_functions) out.push_back(f.bdf.ToString());
  return out;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, i = 0;
  for (; i < a.size() && i < b.size() && a[i] == b[i]; ++i)
    if (a[i] == '\n') ++line;
  if (i == a.size() && i == b.size()) return "(identical)";
  auto line_at = [&](const std::string& s) {
    size_t start = s.rfind('\n', i == 0 ? 0 : i - 1);
    start = start == std::string::npos ? 0 : start + 1;
    return s.substr(start, s.find('\n', start) - start);
  };
  return fmt::format("line {}: '{}' vs '{}'", line, line_at(a), line_at(b));
}

Snapshot SyntheticHost(size_t devices) {
  Snapshot s;
  s.comment = fmt::format("SyntheticHost({})", devices);
  s.verbs_abi_version = 6;
  // 2 nodes x 32 CPUs.
  CpuSet c0 = ParseCpuList("0-31").value(), c1 = ParseCpuList("32-63").value();
  NodeCpus n[2] = {{c0.ToMask(64), "0-31"}, {c1.ToMask(64), "32-63"}};
  Numa numa;
  numa.attrs = {{"online", "0-1"}, {"possible", "0-1"}};
  numa.nodes = {NumaNode{0, n[0].mask, "0-31", "10 21"}, NumaNode{1, n[1].mask, "32-63", "21 10"}};
  s.numa = numa;
  const char* gen5 = "32.0 GT/s PCIe";
  for (size_t i = 0; i < devices; ++i) {
    auto domain = static_cast<unsigned>(i / 16);
    auto slot = static_cast<unsigned>(i % 16);
    int node = static_cast<int>(domain % 2);
    unsigned base = 1 + slot * 4;  // buses base..base+3 below root port 00:(slot+1).0
    auto bdf = [&](unsigned bus, unsigned dev) { return fmt::format("{:04x}:{:02x}:{:02x}.0", domain, bus, dev); };
    auto rp = Fn(bdf(0, slot + 1).c_str(), std::nullopt, 0x8086, 0x352a, 0x060400, node, n[node], gen5, 16);
    MakeBridge(&rp, static_cast<uint8_t>(base), static_cast<uint8_t>(base + 3));
    auto up = Fn(bdf(base, 0).c_str(), rp.bdf, 0x1000, 0xc030, 0x060400, node, n[node], gen5, 16);
    MakeBridge(&up, static_cast<uint8_t>(base + 1), static_cast<uint8_t>(base + 3));
    auto d0 = Fn(bdf(base + 1, 0).c_str(), up.bdf, 0x1000, 0xc030, 0x060400, node, n[node], gen5, 16);
    MakeBridge(&d0, static_cast<uint8_t>(base + 2), static_cast<uint8_t>(base + 2));
    auto d1 = Fn(bdf(base + 1, 1).c_str(), up.bdf, 0x1000, 0xc030, 0x060400, node, n[node], gen5, 16);
    MakeBridge(&d1, static_cast<uint8_t>(base + 3), static_cast<uint8_t>(base + 3));
    auto nic = Fn(bdf(base + 2, 0).c_str(), d0.bdf, 0x15b3, 0x1021, 0x020700, node, n[node], gen5, 16);
    nic.driver = "mlx5_core";
    auto gpu = Fn(bdf(base + 3, 0).c_str(), d1.bdf, 0x10de, 0x2330, 0x030200, node, n[node], gen5, 16);
    std::string guid = fmt::format("b83f:d203:{:04x}:{:04x}", (i >> 16) & 0xffff, i & 0xffff);
    std::string name = fmt::format("mlx5_{}", i);
    auto dev = Ib(name.c_str(), nic.bdf, guid.c_str(), static_cast<uint32_t>(i), "MT4129", "MT_0000000838");
    dev.ports = {IbPort(16, guid, true)};
    std::string ifname = fmt::format("ib{}", i);
    s.netdevs.push_back(Net(ifname.c_str(), nic.bdf, "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:a1:b2:c4", "32", "400000", static_cast<int>(i + 2)));
    s.rdma_devices.push_back(std::move(dev));
    for (auto* f : {&rp, &up, &d0, &d1, &nic, &gpu}) s.pci_functions.push_back(std::move(*f));
  }
  Canonicalize(&s);
  return s;
}

}  // namespace rxp::sysfs::testing
