#include "sysfs/topo_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rxp::sysfs {
namespace {

// NCCL's view of the ancestors of a function: skip one level (a downstream port), keep the
// next (the switch's upstream port), repeat until the root complex.
std::vector<Bdf> SwitchChain(const Snapshot& s, const Bdf& bdf) {
  std::vector<Bdf> chain;
  const PciFunction* cur = s.FindPci(bdf);
  while (cur != nullptr && cur->parent) {
    const PciFunction* down = s.FindPci(*cur->parent);
    if (down == nullptr || !down->parent) break;
    chain.push_back(*down->parent);
    cur = s.FindPci(*down->parent);
  }
  return chain;
}

Bdf TopAncestor(const Snapshot& s, Bdf bdf) {
  for (const PciFunction* f = s.FindPci(bdf); f != nullptr && f->parent; f = s.FindPci(*f->parent))
    bdf = *f->parent;
  return bdf;
}

std::string AttrOr(const PciFunction* fn, std::string_view name, std::string_view fallback) {
  if (fn == nullptr) return std::string(fallback);
  auto it = fn->attrs.find(name);
  if (it == fn->attrs.end() || !it->second || it->second->empty()) return std::string(fallback);
  return *it->second;
}

// The snapshot keeps every display controller and processing accelerator (IsGpuClass), but
// the matrix, like nvidia-smi and rocm-smi, shows compute GPUs: 3D controllers, processing
// accelerators (AMD MI300, Gaudi), VGA controllers from NVIDIA or AMD, and "other" display
// controllers from NVIDIA, AMD (MI200) or Intel (data center GPU Max). A server's BMC VGA
// (ASPEED, Matrox) and an integrated Intel VGA are not.
bool IsComputeGpu(const PciFunction& fn) {
  auto cls = PciClass(fn);
  if (!cls || !IsGpuClass(*cls)) return false;
  const uint32_t subclass = *cls >> 8;
  if (subclass == 0x0302 || subclass == 0x1200) return true;
  auto vendor = fn.attrs.find("vendor");
  if (vendor == fn.attrs.end() || !vendor->second) return false;
  const std::string& v = *vendor->second;
  if (subclass == 0x0300) return v == "0x10de" || v == "0x1002";
  if (subclass == 0x0380) return v == "0x10de" || v == "0x1002" || v == "0x8086";
  return false;
}

}  // namespace

std::string_view PathTypeName(PathType t) {
  switch (t) {
    case PathType::kSelf: return "X";
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
    case PathType::kNone: return "N/A";
  }
  return "?";
}

PathType PciPathType(const Snapshot& s, const Bdf& a, const Bdf& b) {
  const PciFunction* fa = s.FindPci(a);
  const PciFunction* fb = s.FindPci(b);
  if (fa == nullptr || fb == nullptr) return PathType::kNone;
  if (a == b) return PathType::kSelf;
  if (fa->parent && fa->parent == fb->parent) return PathType::kPix;  // one bridge above both
  std::vector<Bdf> ca = SwitchChain(s, a), cb = SwitchChain(s, b);
  for (size_t i = 0; i < ca.size(); ++i) {
    auto j = std::find(cb.begin(), cb.end(), ca[i]);
    if (j != cb.end()) {
      size_t switches = i + static_cast<size_t>(j - cb.begin()) + 1;
      return switches == 1 ? PathType::kPix : PathType::kPxb;
    }
  }
  if (TopAncestor(s, a).RootName() == TopAncestor(s, b).RootName()) return PathType::kPhb;
  auto na = NumaNodeOf(*fa), nb = NumaNodeOf(*fb);
  if (na && nb && *na >= 0 && *na == *nb) return PathType::kNode;
  return PathType::kSys;
}

TopoMatrix BuildTopoMatrix(const Snapshot& s) {
  TopoMatrix m;
  auto endpoint = [&](std::string label, std::string name, std::optional<Bdf> pci) {
    const PciFunction* fn = pci ? s.FindPci(*pci) : nullptr;
    std::string numa = AttrOr(fn, "numa_node", "N/A");
    if (numa == "-1") numa = "N/A";
    m.endpoints.push_back(TopoEndpoint{std::move(label), std::move(name), pci,
                                       AttrOr(fn, "local_cpulist", "N/A"), numa});
  };
  size_t gpus = 0;
  for (const auto& fn : s.pci_functions)
    if (IsComputeGpu(fn)) endpoint(fmt::format("GPU{}", gpus++), fn.bdf.ToString(), fn.bdf);
  std::vector<std::pair<std::string, std::optional<Bdf>>> nics;
  std::set<Bdf> rdma_functions;
  for (const auto& d : s.rdma_devices) {
    nics.emplace_back(d.name, d.pci);
    if (d.pci) rdma_functions.insert(*d.pci);
  }
  for (const auto& nd : s.netdevs)
    if (nd.pci && !rdma_functions.count(*nd.pci)) nics.emplace_back(nd.name, nd.pci);
  std::sort(nics.begin(), nics.end(), [](const auto& x, const auto& y) { return NaturalLess(x.first, y.first); });
  for (size_t i = 0; i < nics.size(); ++i) endpoint(fmt::format("NIC{}", i), nics[i].first, nics[i].second);

  size_t n = m.endpoints.size();
  if (n > kMaxMatrixEndpoints) return m;
  m.cells.assign(n, std::vector<PathType>(n, PathType::kNone));
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) {
      const auto& a = m.endpoints[r].pci;
      const auto& b = m.endpoints[c].pci;
      if (r == c) m.cells[r][c] = PathType::kSelf;
      else if (a && b) m.cells[r][c] = PciPathType(s, *a, *b);
    }
  return m;
}

std::string FormatTopoMatrix(const TopoMatrix& m) {
  std::string out;
  if (m.endpoints.empty()) return "No GPUs or NICs in this snapshot.\n";
  if (m.cells.size() != m.endpoints.size()) {
    // Too many for a matrix (kMaxMatrixEndpoints): one line each, in linear space and time.
    out += fmt::format("{} GPUs and NICs: more than the {} a matrix is printed for; each with "
                       "its affinity:\n\n", m.endpoints.size(), kMaxMatrixEndpoints);
    out += fmt::format("{:<10}{:<24}{:<16}{}\n", "", "Device", "CPU Affinity", "NUMA Affinity");
    for (const auto& e : m.endpoints)
      out += fmt::format("{:<10}{:<24}{:<16}{}\n", e.label,
                         e.pci && e.label.starts_with("NIC")
                             ? fmt::format("{} ({})", e.name, e.pci->ToString())
                             : e.name,
                         e.cpus, e.numa);
    return out;
  }
  size_t label_w = 6;
  for (const auto& e : m.endpoints) label_w = std::max(label_w, e.label.size() + 2);
  size_t cpu_w = 14;
  for (const auto& e : m.endpoints) cpu_w = std::max(cpu_w, e.cpus.size() + 2);
  out += fmt::format("{:<{}}", "", label_w);
  for (const auto& e : m.endpoints) out += fmt::format("{:<{}}", e.label, label_w);
  out += fmt::format("{:<{}}{}\n", "CPU Affinity", cpu_w, "NUMA Affinity");
  for (size_t r = 0; r < m.endpoints.size(); ++r) {
    out += fmt::format("{:<{}}", m.endpoints[r].label, label_w);
    for (size_t c = 0; c < m.endpoints.size(); ++c)
      out += fmt::format("{:<{}}", PathTypeName(m.cells[r][c]), label_w);
    out += fmt::format("{:<{}}{}\n", m.endpoints[r].cpus, cpu_w, m.endpoints[r].numa);
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  N/A  = Not on PCI (a virtual device such as rxe)\n"
      "  (NVLink is not visible in sysfs: GPU-GPU cells show the PCIe path.)\n";
  bool gpus = false, nics = false;
  for (const auto& e : m.endpoints) (e.label.starts_with("GPU") ? gpus : nics) = true;
  if (gpus) {
    out += "\nGPU Legend:\n\n";
    for (const auto& e : m.endpoints)
      if (e.label.starts_with("GPU")) out += fmt::format("  {}: {}\n", e.label, e.name);
  }
  if (nics) {
    out += "\nNIC Legend:\n\n";
    for (const auto& e : m.endpoints)
      if (e.label.starts_with("NIC"))
        out += fmt::format("  {}: {}{}\n", e.label, e.name, e.pci ? " (" + e.pci->ToString() + ")" : "");
  }
  return out;
}

}  // namespace rxp::sysfs
