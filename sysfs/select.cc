#include "sysfs/select.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace rxp::sysfs {
namespace {

bool TiedTo(const Netdev& nd, const RdmaDevice& dev) {
  if (nd.pci && dev.pci && *nd.pci == *dev.pci) return true;
  for (const auto& port : dev.ports)
    for (const auto& gid : port.gids)
      if (gid.ndev == nd.name) return true;
  return false;
}

bool HasUsableGid(const RdmaDevice& dev, const std::set<std::string>& netdevs) {
  for (const auto& port : dev.ports) {
    auto ll = port.attrs.find("link_layer");
    bool ib = ll != port.attrs.end() && ll->second == "InfiniBand";
    for (const auto& gid : port.gids)
      if (ib || (gid.ndev && netdevs.count(*gid.ndev))) return true;
  }
  return false;
}

}  // namespace

Result<Snapshot> Select(const Snapshot& host, const SelectOptions& opts) {
  RXP_TRY(Validate(host));
  Snapshot out;
  out.comment = host.comment;
  out.verbs_abi_version = host.verbs_abi_version;
  out.numa = host.numa;
  out.peer_memory = host.peer_memory;

  // RDMA devices by name.
  std::vector<const RdmaDevice*> devices;
  if (opts.devices) {
    for (const auto& name : *opts.devices) {
      const RdmaDevice* d = host.FindRdma(name);
      if (d == nullptr) {
        std::vector<std::string> have;
        for (const auto& dev : host.rdma_devices) have.push_back(dev.name);
        return Fail(ENOENT, "no RDMA device '{}' in the snapshot (have: {})", name, fmt::join(have, ", "));
      }
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
  } else {
    for (const auto& d : host.rdma_devices) devices.push_back(&d);
  }

  // Netdevs by name, or tied to a kept device, or (no devices named) to no device at all.
  std::set<std::string> netdevs;
  if (opts.netdevs) {
    for (const auto& name : *opts.netdevs) {
      if (!host.FindNetdev(name)) return Fail(ENOENT, "no netdev '{}' in the snapshot", name);
      netdevs.insert(name);
    }
  } else {
    for (const auto& nd : host.netdevs) {
      bool tied_any = false, tied_kept = false;
      for (const auto& d : host.rdma_devices) {
        if (!TiedTo(nd, d)) continue;
        tied_any = true;
        if (std::find(devices.begin(), devices.end(), &d) != devices.end()) tied_kept = true;
      }
      // Naming devices narrows the netdevs to theirs; otherwise untied NICs (gVNIC) stay.
      if (tied_kept || (!tied_any && !opts.devices)) netdevs.insert(nd.name);
    }
  }

  // Devices the sandbox could not use, with their NIC functions and those functions' netdevs.
  std::set<Bdf> dropped_functions;
  if (opts.drop_gidless) {
    std::erase_if(devices, [&](const RdmaDevice* d) {
      if (HasUsableGid(*d, netdevs)) return false;
      if (d->pci) {
        const PciFunction* fn = host.FindPci(*d->pci);
        if (auto cls = PciClass(*fn); cls && IsNicClass(*cls)) dropped_functions.insert(*d->pci);
      }
      return true;
    });
    // A netdev named in opts.netdevs stays: it was asked for by name, and the NIC function
    // it sits on stays with it (as a NIC without a usable RDMA device).
    if (!opts.netdevs)
      std::erase_if(netdevs, [&](const std::string& name) {
        const Netdev* nd = host.FindNetdev(name);
        return nd->pci && dropped_functions.count(*nd->pci);
      });
  }

  for (const RdmaDevice* d : devices) out.rdma_devices.push_back(*d);
  for (const auto& name : netdevs) out.netdevs.push_back(*host.FindNetdev(name));

  // PCI functions: GPUs, NVSwitches, what is kept, function 0 and PFs, then ancestors.
  std::set<Bdf> wanted;
  std::vector<Bdf> nics;
  for (const auto& fn : host.pci_functions) {
    auto cls = PciClass(fn);
    auto vendor = fn.attrs.find("vendor");
    uint32_t v = 0;
    if (vendor != fn.attrs.end() && vendor->second)
      if (auto parsed = ParseHex("vendor", *vendor->second, 0xffff)) v = static_cast<uint32_t>(*parsed);
    if (cls && (IsGpuClass(*cls) || IsNvSwitch(*cls, v))) wanted.insert(fn.bdf);
  }
  for (const auto& d : out.rdma_devices)
    if (d.pci) nics.push_back(*d.pci);
  for (const auto& nd : out.netdevs)
    if (nd.pci) nics.push_back(*nd.pci);
  for (const Bdf& nic : nics) {
    wanted.insert(nic);
    Bdf fn0 = nic;
    fn0.fn = 0;
    if (host.FindPci(fn0) && !dropped_functions.count(fn0)) wanted.insert(fn0);
    if (auto pf = host.FindPci(nic)->physfn; pf && !dropped_functions.count(*pf)) wanted.insert(*pf);
  }
  std::set<Bdf> closure;
  for (const Bdf& bdf : wanted)
    for (std::optional<Bdf> cur = bdf; cur && closure.insert(*cur).second; cur = host.FindPci(*cur)->parent) {
    }
  for (const Bdf& bdf : closure) {
    PciFunction fn = *host.FindPci(bdf);
    if (fn.physfn && !closure.count(*fn.physfn)) fn.physfn.reset();
    // A kept root below a non-PCI device keeps its place (realpaths stay the host's).
    if (auto parent = host.pci_root_parents.find(fn.bdf.BusId());
        !fn.parent && parent != host.pci_root_parents.end())
      out.pci_root_parents.insert(*parent);
    out.pci_functions.push_back(std::move(fn));
  }

  if (opts.renumber) {
    std::vector<RdmaDevice*> with_uverbs;
    for (auto& d : out.rdma_devices)
      if (d.uverbs) with_uverbs.push_back(&d);
    auto host_index = [](const RdmaDevice* d) {
      auto index = UverbsIndex(d->uverbs->host_name.value_or(d->uverbs->name));
      return index ? *index : 0u;  // validated names always parse
    };
    std::sort(with_uverbs.begin(), with_uverbs.end(),
              [&](const RdmaDevice* a, const RdmaDevice* b) { return host_index(a) < host_index(b); });
    for (size_t i = 0; i < with_uverbs.size(); ++i) {
      Uverbs& uv = *with_uverbs[i]->uverbs;
      if (!uv.host_name) {
        uv.host_name = uv.name;
        uv.host_dev = uv.dev;
      }
      uv.name = fmt::format("uverbs{}", i);
      if (opts.uverbs_dev_base) {
        uint64_t minor = uint64_t{opts.uverbs_dev_base->minor} + i;
        if (minor > 0xfffff) return Fail(ERANGE, "uverbs device base {} leaves no room for {} devices",
                                         opts.uverbs_dev_base->ToString(), with_uverbs.size());
        uv.dev = DevNum{opts.uverbs_dev_base->major, static_cast<uint32_t>(minor)};
      }
    }
  } else if (opts.uverbs_dev_base) {
    return Fail(EINVAL, "a uverbs device base only makes sense with renumbering");
  }

  Canonicalize(&out);  // sorted: FindRdma below
  if (opts.uverbs_names) {
    if (opts.renumber) return Fail(EINVAL, "uverbs names and renumbering exclude each other");
    for (const auto& [device, name] : *opts.uverbs_names) {
      const RdmaDevice* d = out.FindRdma(device);
      if (d == nullptr) return Fail(ENOENT, "a uverbs name is given for '{}', which is not selected", device);
      if (!d->uverbs) return Fail(ENODEV, "RDMA device '{}' has no uverbs node in the snapshot", device);
    }
    for (auto& d : out.rdma_devices) {
      if (!d.uverbs) continue;
      auto named = opts.uverbs_names->find(d.name);
      if (named == opts.uverbs_names->end())
        return Fail(EINVAL, "no sandbox uverbs name for RDMA device '{}' ({})", d.name, d.uverbs->name);
      Uverbs& uv = *d.uverbs;
      // A snapshot renumbered before already names its host node (Validate above keeps
      // host_name and host_dev together).
      if (!uv.host_name) {
        uv.host_name = uv.name;
        uv.host_dev = uv.dev;
      }
      uv.name = named->second;
      uv.dev = *uv.host_dev;
    }
  }
  RXP_TRY(Validate(out));
  return out;
}

}  // namespace rxp::sysfs
