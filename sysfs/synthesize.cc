#include "sysfs/synthesize.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "sysfs/names.h"
#include "sysfs/policy.h"

namespace rxp::sysfs {
namespace {

// The zero GID the kernel prints for an unpopulated table entry (show_port_gid()).
constexpr std::string_view kZeroGid = "0000:0000:0000:0000:0000:0000:0000:0000";

std::optional<uint64_t> AttrDecimal(const PciFunction& fn, std::string_view name) {
  auto it = fn.attrs.find(name);
  if (it == fn.attrs.end() || !it->second) return std::nullopt;
  auto v = ParseDecimal(name, *it->second, 0xffff);
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

uint16_t AttrHex16(const PciFunction& fn, std::string_view name) {
  auto it = fn.attrs.find(name);
  if (it == fn.attrs.end() || !it->second) return 0xffff;
  auto v = ParseHex(name, *it->second, 0xffff);
  return v ? static_cast<uint16_t>(*v) : 0xffff;
}

struct BusRange {
  uint8_t secondary = 0;
  uint8_t subordinate = 0;
};

// Secondary (children's bus) and subordinate (highest bus below) of every bridge that has
// something below it: one walk up from each function, O(functions x depth).
std::map<Bdf, BusRange> BridgeBusRanges(const Snapshot& s) {
  std::map<Bdf, BusRange> ranges;
  for (const auto& fn : s.pci_functions) {
    bool direct = true;
    for (std::optional<Bdf> p = fn.parent; p; p = s.FindPci(*p)->parent) {
      auto [it, fresh] = ranges.try_emplace(*p, BusRange{fn.bdf.bus, fn.bdf.bus});
      if (direct) it->second.secondary = fn.bdf.bus;
      it->second.subordinate = std::max(it->second.subordinate, fn.bdf.bus);
      (void)fresh;
      direct = false;
    }
  }
  return ranges;
}

// The 64-byte header (include/uapi/linux/pci_regs.h offsets) for a function without one.
std::array<uint8_t, 64> ConfigFor(const PciFunction& fn, const BusRange* range) {
  std::array<uint8_t, 64> c{};
  auto put16 = [&](size_t off, uint16_t v) {
    c[off] = static_cast<uint8_t>(v);
    c[off + 1] = static_cast<uint8_t>(v >> 8);
  };
  put16(0x00, AttrHex16(fn, "vendor"));  // PCI_VENDOR_ID
  put16(0x02, AttrHex16(fn, "device"));  // PCI_DEVICE_ID
  uint32_t cls = PciClass(fn).value_or(0);
  c[0x08] = static_cast<uint8_t>(AttrHex16(fn, "revision"));  // PCI_REVISION_ID
  c[0x09] = static_cast<uint8_t>(cls);                        // PCI_CLASS_PROG
  c[0x0a] = static_cast<uint8_t>(cls >> 8);                   // PCI_CLASS_DEVICE
  c[0x0b] = static_cast<uint8_t>(cls >> 16);
  if (IsBridgeClass(cls)) {
    c[0x0e] = 0x01;  // PCI_HEADER_TYPE_BRIDGE
    c[0x18] = fn.bdf.bus;  // PCI_PRIMARY_BUS
    // The bus range as the attributes say (validated against the children), else as the
    // children show it: a selection may drop the bridges that used the top of the range, and
    // an empty hot-plug port has no children at all.
    const auto bus_attr = [&](std::string_view name) -> std::optional<uint8_t> {
      auto v = BusNumberAttr(fn, name);  // a validated snapshot's are numbers
      return v ? *v : std::nullopt;
    };
    const auto secondary = bus_attr("secondary_bus_number");
    const auto subordinate = bus_attr("subordinate_bus_number");
    c[0x19] = range ? range->secondary : secondary.value_or(0);  // PCI_SECONDARY_BUS
    c[0x1a] = std::max<uint8_t>(range ? range->subordinate : 0,
                                subordinate.value_or(0));      // PCI_SUBORDINATE_BUS
  } else {
    put16(0x2c, AttrHex16(fn, "subsystem_vendor"));  // PCI_SUBSYSTEM_VENDOR_ID
    put16(0x2e, AttrHex16(fn, "subsystem_device"));  // PCI_SUBSYSTEM_ID
  }
  return c;
}

class Builder {
 public:
  explicit Builder(const Snapshot& s) : s_(s), bus_ranges_(BridgeBusRanges(s)) {}

  Result<Tree> Build() {
    RXP_TRY(Skeleton());
    for (const auto& fn : s_.pci_functions) RXP_TRY(AddPciFunction(fn));
    for (const auto& fn : s_.pci_functions) RXP_TRY(AddSriovLinks(fn));
    if (!s_.rdma_devices.empty()) RXP_TRY(AddRdmaClasses());
    // In natural name order (mlx5_2 before mlx5_10): a listing of the class directories in
    // creation order (SysfsVfs::ReadDir, a materialized tmpfs) then matches the kernel's
    // registration order, in which libibverbs lists the devices natively (netlink's index
    // order); the snapshot itself keeps them sorted by plain name.
    std::vector<const RdmaDevice*> rdma;
    for (const auto& dev : s_.rdma_devices) rdma.push_back(&dev);
    std::stable_sort(rdma.begin(), rdma.end(), [](const RdmaDevice* a, const RdmaDevice* b) {
      return NaturalLess(a->name, b->name);
    });
    for (const RdmaDevice* dev : rdma) RXP_TRY(AddRdmaDevice(*dev));
    for (const auto& nd : s_.netdevs) RXP_TRY(AddNetdev(nd));
    if (s_.numa) RXP_TRY(AddNuma(*s_.numa));
    RXP_TRY(AddPeerMemory());
    return std::move(t_);
  }

 private:
  Result<NodeId> Dir(std::string_view rel) { return t_.MkdirAll(rel); }
  // `parent`/`name`, created when missing.
  Result<NodeId> SubDir(NodeId parent, std::string_view name) {
    if (auto c = t_.Child(parent, name)) return *c;
    return t_.Mkdir(parent, name);
  }

  Result<void> Skeleton() {
    // The directories every kernel has, whether or not the snapshot fills them.
    for (std::string_view rel : {"devices/system", "devices/virtual", "bus/pci/devices",
                                 "bus/pci/drivers", "class/net", "class/pci_bus", "kernel/mm",
                                 "module", "fs"}) {
      auto d = Dir(rel);
      if (!d) return std::move(d).error();
    }
    bus_pci_ = *t_.Find("bus/pci");
    bus_pci_devices_ = *t_.Find("bus/pci/devices");
    class_pci_bus_ = *t_.Find("class/pci_bus");
    class_net_ = *t_.Find("class/net");
    for (const auto& rule : kPassthroughRules) {
      std::string_view rel = rule.path.substr(Tree::kMountPoint.size() + 1);
      size_t slash = rel.rfind('/');
      auto parent = Dir(slash == std::string_view::npos ? "" : rel.substr(0, slash));
      if (!parent) return std::move(parent).error();
      auto p = t_.AddPassthrough(*parent, rel.substr(slash + 1));
      if (!p) return std::move(p).error();
    }
    return Ok();
  }

  Result<void> AddAttrs(NodeId dir, const Attrs& attrs) {
    for (const auto& [name, value] : attrs) {
      auto r = value ? t_.AddFile(dir, name, *value + "\n") : t_.AddUnreadable(dir, name);
      if (!r) return std::move(r).error();
    }
    return Ok();
  }

  // A pci_bus/<bus> directory below `host` (a root complex or bridge directory), and its
  // /sys/class/pci_bus entry (pci_alloc_child_bus(), pcibus_class).
  Result<void> AddPciBus(NodeId host, const std::string& bus_id) {
    auto dir = SubDir(host, "pci_bus");
    if (!dir) return std::move(dir).error();
    if (t_.Child(*dir, bus_id)) return Ok();
    auto bus = t_.Mkdir(*dir, bus_id);
    if (!bus) return std::move(bus).error();
    RXP_TRY(t_.Link(*bus, "device", host));
    RXP_TRY(t_.Link(*bus, "subsystem", class_pci_bus_));
    RXP_TRY(t_.Link(class_pci_bus_, bus_id, *bus));
    return Ok();
  }

  // The directory of a PCI function, creating its root complex and parents first.
  Result<NodeId> PciDir(const Bdf& bdf) {
    if (auto it = pci_dirs_.find(bdf); it != pci_dirs_.end()) return it->second;
    const PciFunction* fn = s_.FindPci(bdf);
    if (fn == nullptr) return Fail(ENOENT, "synthesize: no PCI function {}", bdf.ToString());
    NodeId host;
    if (fn->parent) {
      auto p = PciDir(*fn->parent);
      if (!p) return std::move(p).error();
      host = *p;
    } else {
      // pci_create_root_bus(): pciDDDD:BB owns root bus DDDD:BB, in /sys/devices or below the
      // device that created it (Hyper-V's VMBus device: Snapshot::pci_root_parents). The
      // directories above it are bare: consumers walk up only to the root complex.
      auto r = Dir(PciRootDir(s_, bdf));
      if (!r) return std::move(r).error();
      host = *r;
    }
    RXP_TRY(AddPciBus(host, bdf.BusId()));
    auto dir = t_.Mkdir(host, bdf.ToString());
    if (!dir) return std::move(dir).error();
    pci_dirs_.emplace(bdf, *dir);
    return *dir;
  }

  Result<void> AddPciFunction(const PciFunction& fn) {
    auto dir = PciDir(fn.bdf);
    if (!dir) return std::move(dir).error();
    // pci_create_sysfs_dev_files() / pci_dev_attrs: the attribute files, then `config`
    // (hwloc_linuxfs_pci_look_pcidevices reads bridge bus numbers and header type from it).
    RXP_TRY(AddAttrs(*dir, fn.attrs));
    std::array<uint8_t, 64> config;
    if (fn.config) {
      config = *fn.config;
    } else {
      auto range = bus_ranges_.find(fn.bdf);
      config = ConfigFor(fn, range == bus_ranges_.end() ? nullptr : &range->second);
    }
    RXP_TRY(t_.AddFile(*dir, "config", std::string(config.begin(), config.end())));
    // NCCL ncclTopoGetSubsystem: realpath(<dev>/subsystem) must end in "pci".
    RXP_TRY(t_.Link(*dir, "subsystem", bus_pci_));
    RXP_TRY(t_.Link(bus_pci_devices_, fn.bdf.ToString(), *dir));
    if (fn.driver) {
      auto drv = Dir("bus/pci/drivers/" + *fn.driver);
      if (!drv) return std::move(drv).error();
      RXP_TRY(t_.Link(*dir, "driver", *drv));
      RXP_TRY(t_.Link(*drv, fn.bdf.ToString(), *dir));
    }
    return Ok();
  }

  // pci_iov_sysfs_link(): VF/physfn and PF/virtfn<N>, N = (rid - pf_rid - offset) / stride;
  // nullopt when the PF's sriov_offset/sriov_stride do not place `vf` (absent, or not this
  // snapshot's geometry).
  std::optional<uint32_t> VfIndexByGeometry(const PciFunction& pf, const PciFunction& vf) const {
    auto rid = [](const Bdf& b) { return static_cast<int64_t>((b.bus << 8) | (b.dev << 3) | b.fn); };
    std::optional<uint64_t> o = AttrDecimal(pf, "sriov_offset"), st = AttrDecimal(pf, "sriov_stride");
    const int64_t delta = rid(vf.bdf) - rid(pf.bdf);
    if (!o || !st || *st == 0 || delta < 0 || static_cast<uint64_t>(delta) < *o) return std::nullopt;
    const uint64_t from_first = static_cast<uint64_t>(delta) - *o;
    if (from_first % *st != 0) return std::nullopt;
    return static_cast<uint32_t>(from_first / *st);
  }

  Result<void> AddSriovLinks(const PciFunction& vf) {
    if (!vf.physfn) return Ok();
    const PciFunction* pf = s_.FindPci(*vf.physfn);
    NodeId vf_dir = pci_dirs_.at(vf.bdf), pf_dir = pci_dirs_.at(pf->bdf);
    // One rule for all VFs of a PF, so that two never share a virtfn name: the geometry when
    // it places every one of them (distinct routing IDs give distinct N), else routing-ID
    // order, as the kernel numbers them. A damaged or edited snapshot whose geometry places
    // only some of its VFs once made two VFs virtfn1 (found by fuzz.sysfs_snapshot).
    // Decided once per PF (a host can have hundreds of VFs per PF).
    auto [decided, fresh] = placed_by_geometry_.try_emplace(pf->bdf, true);
    if (fresh)
      for (const auto& other : s_.pci_functions)
        if (other.physfn == pf->bdf && !VfIndexByGeometry(*pf, other)) decided->second = false;
    const bool by_geometry = decided->second;
    uint32_t index = 0;
    if (by_geometry) {
      index = *VfIndexByGeometry(*pf, vf);
    } else {
      for (const auto& other : s_.pci_functions)
        if (other.physfn == pf->bdf && other.bdf < vf.bdf) ++index;
    }
    RXP_TRY(t_.Link(vf_dir, "physfn", pf_dir));
    RXP_TRY(t_.Link(pf_dir, fmt::format("virtfn{}", index), vf_dir));
    return Ok();
  }

  Result<void> AddRdmaClasses() {
    auto ib = Dir("class/infiniband");
    if (!ib) return std::move(ib).error();
    class_ib_ = *ib;
    auto verbs = Dir("class/infiniband_verbs");
    if (!verbs) return std::move(verbs).error();
    class_verbs_ = *verbs;
    // ib_uverbs_init(): class attribute abi_version (IB_USER_VERBS_ABI_VERSION).
    if (s_.verbs_abi_version)
      RXP_TRY(t_.AddFile(class_verbs_, "abi_version", fmt::format("{}\n", *s_.verbs_abi_version)));
    return Ok();
  }

  // Where a class device lives: below its PCI function, or in /sys/devices/virtual/<class>.
  Result<NodeId> ClassDeviceDir(const std::optional<Bdf>& pci, std::string_view cls,
                                std::string_view name) {
    NodeId parent;
    if (pci) {
      auto p = PciDir(*pci);
      if (!p) return std::move(p).error();
      auto c = SubDir(*p, cls);
      if (!c) return std::move(c).error();
      parent = *c;
    } else {
      auto v = Dir(fmt::format("devices/virtual/{}", cls));
      if (!v) return std::move(v).error();
      parent = *v;
    }
    auto dir = t_.Mkdir(parent, name);
    if (!dir) return std::move(dir).error();
    // device_add(): `device` points at the parent device (none for a virtual device).
    if (pci) RXP_TRY(t_.Link(*dir, "device", pci_dirs_.at(*pci)));
    return *dir;
  }

  // device_add() of a class device: its directory, `subsystem`, and the class's link to it.
  Result<NodeId> ClassDevice(const std::optional<Bdf>& pci, std::string_view cls, std::string_view name,
                             NodeId class_dir) {
    auto dir = ClassDeviceDir(pci, cls, name);
    if (!dir) return std::move(dir).error();
    RXP_TRY(t_.Link(*dir, "subsystem", class_dir));
    RXP_TRY(t_.Link(class_dir, name, *dir));
    return *dir;
  }

  Result<void> AddPort(NodeId ports, const Port& port) {
    auto dir = t_.Mkdir(ports, fmt::format("{}", port.number));
    if (!dir) return std::move(dir).error();
    RXP_TRY(AddAttrs(*dir, port.attrs));
    // drivers/infiniband/core/sysfs.c: gids/N for every table index; an unpopulated entry
    // reads as the zero GID, while its gid_attrs/{types,ndevs}/N fail with EINVAL
    // (rdma_get_gid_attr() on an invalid entry). NCCL and libibverbs rely on that EINVAL.
    auto gids = t_.Mkdir(*dir, "gids");
    if (!gids) return std::move(gids).error();
    auto attrs = t_.Mkdir(*dir, "gid_attrs");
    if (!attrs) return std::move(attrs).error();
    auto types = t_.Mkdir(*attrs, "types");
    if (!types) return std::move(types).error();
    auto ndevs = t_.Mkdir(*attrs, "ndevs");
    if (!ndevs) return std::move(ndevs).error();
    size_t next = 0;
    for (uint32_t i = 0; i < port.gid_table_len; ++i) {
      std::string idx = std::to_string(i);
      const Gid* g = next < port.gids.size() && port.gids[next].index == i ? &port.gids[next++] : nullptr;
      RXP_TRY(t_.AddFile(*gids, idx, std::string(g ? std::string_view(g->gid) : kZeroGid) + "\n"));
      RXP_TRY(g ? t_.AddFile(*types, idx, g->type + "\n") : t_.AddUnreadable(*types, idx));
      RXP_TRY(g && g->ndev ? t_.AddFile(*ndevs, idx, *g->ndev + "\n") : t_.AddUnreadable(*ndevs, idx));
    }
    auto pkeys = t_.Mkdir(*dir, "pkeys");
    if (!pkeys) return std::move(pkeys).error();
    for (size_t i = 0; i < port.pkeys.size(); ++i)
      RXP_TRY(t_.AddFile(*pkeys, fmt::format("{}", i), port.pkeys[i] + "\n"));
    return Ok();
  }

  Result<void> AddRdmaDevice(const RdmaDevice& dev) {
    // ib_register_device() -> /sys/class/infiniband/<name> (ib_class, ib_dev_attrs).
    auto dir = ClassDevice(dev.pci, "infiniband", dev.name, class_ib_);
    if (!dir) return std::move(dir).error();
    RXP_TRY(AddAttrs(*dir, dev.attrs));
    auto ports = t_.Mkdir(*dir, "ports");
    if (!ports) return std::move(ports).error();
    for (const auto& port : dev.ports) RXP_TRY(AddPort(*ports, port));
    if (!dev.uverbs) return Ok();
    // ib_uverbs_add_one(): uverbsN with ibdev, abi_version and dev (what libibverbs'
    // find_sysfs_devs() reads; `dev` must match the sandbox's /dev/infiniband node).
    const Uverbs& uv = *dev.uverbs;
    auto udir = ClassDevice(dev.pci, "infiniband_verbs", uv.name, class_verbs_);
    if (!udir) return std::move(udir).error();
    RXP_TRY(t_.AddFile(*udir, "ibdev", dev.name + "\n"));
    if (uv.abi_version) RXP_TRY(t_.AddFile(*udir, "abi_version", fmt::format("{}\n", *uv.abi_version)));
    RXP_TRY(t_.AddFile(*udir, "dev", uv.dev.ToString() + "\n"));
    return Ok();
  }

  Result<void> AddNetdev(const Netdev& nd) {
    // register_netdevice() -> netdev_register_kobject(): /sys/class/net/<name>.
    auto dir = ClassDevice(nd.pci, "net", nd.name, class_net_);
    if (!dir) return std::move(dir).error();
    RXP_TRY(AddAttrs(*dir, nd.attrs));
    return Ok();
  }

  Result<void> AddNuma(const Numa& numa) {
    // drivers/base/node.c: node_state_attrs and per-node cpumap/cpulist/distance. NUMA is
    // kept as on the host, so numa_node and local_cpus of every function stay consistent.
    auto dir = Dir("devices/system/node");
    if (!dir) return std::move(dir).error();
    RXP_TRY(AddAttrs(*dir, numa.attrs));
    for (const auto& n : numa.nodes) {
      auto nd = t_.Mkdir(*dir, fmt::format("node{}", n.id));
      if (!nd) return std::move(nd).error();
      RXP_TRY(t_.AddFile(*nd, "cpumap", n.cpumap + "\n"));
      RXP_TRY(t_.AddFile(*nd, "cpulist", n.cpulist + "\n"));
      // Empty: the capture had none (the snapshot reader); a live kernel always has one.
      if (!n.distance.empty()) RXP_TRY(t_.AddFile(*nd, "distance", n.distance + "\n"));
      // node_read_meminfo()'s first lines, in its format: MemTotal, and where the snapshot
      // has it, MemFree at capture time and MemUsed (their difference, as the kernel prints
      // it); the rest is live state the schema does not describe.
      if (n.mem_total_kb) {
        std::string meminfo = fmt::format("Node {} MemTotal:       {:8} kB\n", n.id, *n.mem_total_kb);
        // ParseSnapshot refuses free above total; one built in code must not wrap MemUsed.
        if (n.mem_free_kb && *n.mem_free_kb <= *n.mem_total_kb)
          meminfo += fmt::format("Node {} MemFree:        {:8} kB\nNode {} MemUsed:        {:8} kB\n",
                                 n.id, *n.mem_free_kb, n.id, *n.mem_total_kb - *n.mem_free_kb);
        RXP_TRY(t_.AddFile(*nd, "meminfo", meminfo));
      }
    }
    return Ok();
  }

  Result<void> AddPeerMemory() {
    const PeerMemory& pm = s_.peer_memory;
    auto add = [&](std::string_view rel, const std::optional<std::string>& version) -> Result<void> {
      if (!version) return Ok();
      auto dir = Dir(rel);
      if (!dir) return std::move(dir).error();
      RXP_TRY(t_.AddFile(*dir, "version", *version + "\n"));
      return Ok();
    };
    RXP_TRY(add("module/nvidia_peermem", pm.nvidia_peermem));
    RXP_TRY(add("kernel/mm/memory_peers/nv_mem", pm.nv_mem));
    RXP_TRY(add("kernel/mm/memory_peers/nv_mem_nc", pm.nv_mem_nc));
    return Ok();
  }

  const Snapshot& s_;
  std::map<Bdf, BusRange> bus_ranges_;
  Tree t_;
  std::map<Bdf, NodeId> pci_dirs_;
  std::map<Bdf, bool> placed_by_geometry_;  // per PF: its SR-IOV geometry places all its VFs
  NodeId bus_pci_ = 0, bus_pci_devices_ = 0, class_pci_bus_ = 0, class_net_ = 0;
  NodeId class_ib_ = 0, class_verbs_ = 0;
};

}  // namespace

std::array<uint8_t, 64> SynthesizeConfig(const Snapshot& s, const PciFunction& fn) {
  auto ranges = BridgeBusRanges(s);
  auto it = ranges.find(fn.bdf);
  return ConfigFor(fn, it == ranges.end() ? nullptr : &it->second);
}

Result<Tree> Synthesize(const Snapshot& snapshot) {
  RXP_TRY(Validate(snapshot));
  return Builder(snapshot).Build();
}

}  // namespace rxp::sysfs
