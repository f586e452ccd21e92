#include "sysfs/snapshot_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "sysfs/cpuset.h"
#include "sysfs/names.h"

namespace rxp::sysfs {
namespace {

constexpr size_t kAttrMax = Limits::kAttrBytes;

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or values past
// U+10FFFF). A snapshot is JSON, whose strings are UTF-8: other bytes cannot survive in it.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The lead byte says how many continuation bytes follow; 0xc0, 0xc1 and 0xf5.. never lead.
    const size_t extra = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
                         : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (extra == 0 || i + extra >= text.size()) return false;
    uint32_t cp = c & (0x7fu >> (extra + 1));
    for (size_t k = 1; k <= extra; ++k) {
      const auto t = static_cast<unsigned char>(text[i + k]);
      if ((t & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3f);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    i += extra + 1;
  }
  return true;
}

class Reader {
 public:
  Reader(const FsView& sys, const ReadOptions& opts) : sys_(sys), opts_(opts) {}

  Result<ReadResult> Run() {
    // A sysfs mount has both; a wrong --root (/, an empty directory, a fake root's top rather
    // than its sys/) would otherwise read as a host with nothing in it.
    for (const char* dir : {"/class", "/devices"}) {
      auto kind = sys_.Kind(dir, /*follow=*/true);
      if (!kind || *kind != FileKind::kDir)
        return Fail(ENOENT, "no {}/ directory: this is not a sysfs tree (for a fake root, "
                    "name its sys/)", dir + 1);
    }
    RXP_TRY(ReadVerbsAbi());
    RXP_TRY(ReadUverbsMap());
    RXP_TRY(ReadRdmaDevices());
    RXP_TRY(ReadNetdevs());
    RXP_TRY(FindGpus());
    RXP_TRY(ReadPciClosure());
    RXP_TRY(ReadNuma());
    ReadPeerMemory();
    Canonicalize(&out_.snapshot);
    if (auto v = Validate(out_.snapshot); !v)
      return Fail(v.error().errnum, "the sysfs tree is inconsistent: {}", v.error().reason);
    return std::move(out_);
  }

 private:
  void Warn(std::string line) { out_.warnings.push_back(std::move(line)); }

  // A NIC function: included, and its function 0 and PF with it (ReadPciClosure).
  void WantNic(const std::optional<Bdf>& pci) {
    if (!pci) return;
    pci_wanted_.insert(*pci);
    nic_functions_.insert(*pci);
  }

  // A kernel attribute: its text without the final newline; nullopt when the read fails with
  // EINVAL (or, in a rendered tree, the file is empty: materialize's stand-in for EINVAL).
  // ENOENT comes back as an error for the caller to treat as "absent".
  Result<AttrValue> ReadAttr(const std::string& path) {
    auto text = sys_.ReadFile(path, kAttrMax + 1);
    if (!text) {
      if (text.error().errnum == EINVAL) return AttrValue{};
      return std::move(text).error();
    }
    if (text->size() > kAttrMax) return Fail(EFBIG, "{}: larger than an attribute can be", Quote(path));
    // Some kernels' attributes end with their terminating NUL after the newline (the node
    // cpumap and has_* files in hwloc's test trees of real machines do): not part of the value.
    while (!text->empty() && text->back() == '\0') text->pop_back();
    if (text->empty()) return AttrValue{};
    if (text->back() == '\n') text->pop_back();
    if (!IsUtf8(*text))
      Warn(fmt::format("{}: not UTF-8 text; the snapshot (JSON) holds its other bytes as U+FFFD",
                       Quote(path)));
    return AttrValue{std::move(*text)};
  }

  // The list to keep next to `mask`: `list` when both name the same CPUs, else the mask's own.
  // The kernel prints both from one cpumask (node_read_cpumap(), local_cpus_show() /
  // local_cpulist_show()), so on a live system they never disagree; a capture edited by hand
  // can (hwloc's test trees fake topologies in the masks only). The mask is what hwloc,
  // libnuma and NCCL read, so it wins, with a warning.
  std::string ListMatchingMask(const std::string& mask, const std::string& list, std::string_view where) {
    auto m = ParseCpuMask(mask);
    if (!m) return list;  // Validate names the malformed mask
    if (auto l = ParseCpuList(list); l && *l == *m) return list;
    std::string own = m->ToList();
    Warn(fmt::format("{}: the list {} disagrees with the mask {}; kept the mask's {}", where, Quote(list),
                     Quote(mask), Quote(own)));
    return own;
  }

  void KeepMaskOverList(Attrs& attrs, std::string_view mask_key, std::string_view list_key,
                        std::string_view dir) {
    auto mask = attrs.find(mask_key);
    auto list = attrs.find(list_key);
    if (mask == attrs.end() || list == attrs.end() || !mask->second || !list->second) return;
    list->second = ListMatchingMask(*mask->second, *list->second, fmt::format("{}/{}", dir, list_key));
  }

  // One line of a node's meminfo `text` at `path` ("Node 0 MemTotal:       32658348 kB",
  // node_read_meminfo()), `key` being "MemTotal" or "MemFree"; nullopt when the line is missing
  // or malformed (a warning for the latter).
  std::optional<uint64_t> MeminfoKb(std::string_view text, const std::string& path, std::string_view key) {
    const std::string field = fmt::format(" {}:", key);
    const size_t at = text.find(field);
    if (at == std::string::npos) return std::nullopt;
    std::string_view rest = text.substr(at + field.size());
    rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    const size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    auto kb = ParseDecimal(path, rest.substr(0, digits), Limits::kNodeMemKb);
    if (!kb || !rest.substr(digits).starts_with(" kB")) {
      Warn(fmt::format("skipped {}: no {} in kB", path, key));
      return std::nullopt;
    }
    return *kb;
  }

  // Reads the allowed attributes of `dir` that exist.
  Attrs ReadAttrs(const std::string& dir, std::span<const std::string_view> names) {
    Attrs attrs;
    for (auto name : names) {
      std::string path = dir + "/" + std::string(name);
      auto v = ReadAttr(path);
      if (v) {
        attrs.emplace(std::string(name), std::move(*v));
      } else if (v.error().errnum != ENOENT) {
        Warn(fmt::format("skipped {}: {}", path, v.error().ToString()));
      } else if (auto kind = sys_.Kind(path, /*follow=*/false); kind && *kind == FileKind::kSymlink) {
        // Absent is normal (an older kernel's device); a link there that leads nowhere in the
        // tree (a capture's link to /dev/zero, resolved inside the root) is not.
        Warn(fmt::format("skipped {}: a symlink that leads to nothing in the tree", path));
      }
    }
    return attrs;
  }

  Result<std::vector<std::string>> ListIfPresent(const std::string& dir) {
    auto names = sys_.ListDir(dir);
    if (!names && names.error().errnum == ENOENT) return std::vector<std::string>{};
    return names;
  }

  Result<void> ReadVerbsAbi() {
    auto v = ReadAttr("/class/infiniband_verbs/abi_version");
    if (!v) return v.error().errnum == ENOENT ? Ok() : Result<void>(std::move(v).error());
    if (!*v) return Ok();
    auto n = ParseDecimal("class/infiniband_verbs/abi_version", **v, 1000);
    if (!n) return std::move(n).error();
    out_.snapshot.verbs_abi_version = static_cast<uint32_t>(*n);
    return Ok();
  }

  Result<void> ReadUverbsMap() {
    auto names = ListIfPresent("/class/infiniband_verbs");
    if (!names) return std::move(names).error();
    for (const auto& name : *names) {
      if (!UverbsIndex(name)) continue;  // abi_version and the like
      std::string dir = "/class/infiniband_verbs/" + name;
      auto ibdev = ReadAttr(dir + "/ibdev");
      auto dev = ReadAttr(dir + "/dev");
      if (!ibdev || !*ibdev || !dev || !*dev) {
        Warn(fmt::format("skipped {}: no readable ibdev/dev", dir));
        continue;
      }
      auto devnum = ParseDevNum(**dev);
      if (!devnum) return Fail(EINVAL, "{}/dev: {}", dir, devnum.error().reason);
      Uverbs uv{name, *devnum, std::nullopt, std::nullopt, std::nullopt};
      if (auto abi = ReadAttr(dir + "/abi_version"); abi && *abi) {
        auto n = ParseDecimal(dir + "/abi_version", **abi, 1000);
        if (!n) return std::move(n).error();
        uv.abi_version = static_cast<uint32_t>(*n);
      }
      uverbs_by_ibdev_.emplace(**ibdev, std::move(uv));
    }
    return Ok();
  }

  // Where a class device lives: under a PCI function (returns it) or in /devices/virtual.
  Result<std::optional<Bdf>> ClassDeviceParent(std::string_view cls, const std::string& name) {
    std::string link = fmt::format("/class/{}/{}", cls, name);
    auto real = sys_.RealPath(link);
    if (!real) return std::move(real).error();
    std::string suffix = fmt::format("/{}/{}", cls, name);
    if (!real->ends_with(suffix))
      return Fail(EINVAL, "{} resolves to {}, not a {} class device", link, Quote(*real), cls);
    std::string parent = real->substr(0, real->size() - suffix.size());
    if (parent == "/devices/virtual") return std::optional<Bdf>{};
    auto pci = ParsePciPath(parent);
    if (!pci) return Fail(EINVAL, "{} lives at {}: neither virtual nor on a PCI function ({})", link,
                          Quote(*real), pci.error().reason);
    RememberChain(*pci);
    return std::optional<Bdf>{pci->chain.back()};
  }

  Result<Port> ReadPort(const std::string& dir, uint32_t number) {
    Port port;
    port.number = number;
    port.attrs = ReadAttrs(dir, PortAttrNames());
    auto gid_names = ListIfPresent(dir + "/gids");
    if (!gid_names) return std::move(gid_names).error();
    uint64_t len = 0;
    for (const auto& g : *gid_names) {
      auto idx = ParseDecimal(dir + "/gids", g, Limits::kGidTableLen - 1);
      if (!idx) return std::move(idx).error();
      len = std::max(len, *idx + 1);
    }
    if (len != gid_names->size())
      return Fail(EINVAL, "{}/gids: {} entries but the highest index is {}", dir, gid_names->size(), len - 1);
    port.gid_table_len = static_cast<uint32_t>(len);
    bool has_attrs = sys_.Kind(dir + "/gid_attrs", true).ok();
    for (uint32_t i = 0; i < port.gid_table_len; ++i) {
      auto gid = ReadAttr(fmt::format("{}/gids/{}", dir, i));
      if (!gid) return std::move(gid).error();
      if (!*gid) continue;
      Gid entry{i, **gid, "IB/RoCE v1", std::nullopt};
      if (has_attrs) {
        // Populated exactly when the type reads (show_port_gid_attr() fails on invalid entries).
        auto type = ReadAttr(fmt::format("{}/gid_attrs/types/{}", dir, i));
        if (!type) return std::move(type).error();
        if (!*type) continue;
        entry.type = **type;
        auto ndev = ReadAttr(fmt::format("{}/gid_attrs/ndevs/{}", dir, i));
        if (!ndev && ndev.error().errnum != ENOENT) return std::move(ndev).error();
        if (ndev && *ndev) entry.ndev = **ndev;
      } else if (entry.gid == "0000:0000:0000:0000:0000:0000:0000:0000") {
        continue;  // pre-4.x kernels: no gid_attrs, an unpopulated entry is the zero GID
      }
      port.gids.push_back(std::move(entry));
    }
    auto pkey_names = ListIfPresent(dir + "/pkeys");
    if (!pkey_names) return std::move(pkey_names).error();
    if (pkey_names->size() > Limits::kPkeysPerPort) return Fail(E2BIG, "{}/pkeys: too many", dir);
    for (size_t i = 0; i < pkey_names->size(); ++i) {
      auto pkey = ReadAttr(fmt::format("{}/pkeys/{}", dir, i));
      if (!pkey) return std::move(pkey).error();
      port.pkeys.push_back(pkey->value_or("0x0000"));
    }
    return port;
  }

  Result<void> ReadRdmaDevices() {
    auto names = ListIfPresent("/class/infiniband");
    if (!names) return std::move(names).error();
    std::vector<std::string> wanted = opts_.devices.value_or(*names);
    for (const auto& name : wanted) {
      if (std::find(names->begin(), names->end(), name) == names->end())
        return Fail(ENOENT, "no RDMA device '{}' in /class/infiniband (have: {})", name,
                    fmt::join(*names, ", "));
      RXP_TRY(CheckIbdevName("RDMA device", name));
      RdmaDevice dev;
      dev.name = name;
      auto pci = ClassDeviceParent("infiniband", name);
      if (!pci) {
        if (opts_.devices) return std::move(pci).error();
        Warn(fmt::format("skipped RDMA device {}: {}", name, pci.error().reason));
        continue;
      }
      dev.pci = *pci;
      std::string dir = "/class/infiniband/" + name;
      dev.attrs = ReadAttrs(dir, IbAttrNames());
      auto ports = ListIfPresent(dir + "/ports");
      if (!ports) return std::move(ports).error();
      std::vector<uint32_t> numbers;
      for (const auto& p : *ports) {
        auto n = ParseDecimal(dir + "/ports", p, 255);
        if (!n) return std::move(n).error();
        numbers.push_back(static_cast<uint32_t>(*n));
      }
      std::sort(numbers.begin(), numbers.end());
      for (uint32_t n : numbers) {
        auto port = ReadPort(fmt::format("{}/ports/{}", dir, n), n);
        if (!port) return std::move(port).error();
        dev.ports.push_back(std::move(*port));
      }
      if (auto uv = uverbs_by_ibdev_.find(name); uv != uverbs_by_ibdev_.end()) dev.uverbs = uv->second;
      WantNic(dev.pci);
      out_.snapshot.rdma_devices.push_back(std::move(dev));
    }
    return Ok();
  }

  Result<void> ReadNetdevs() {
    auto all = ListIfPresent("/class/net");
    if (!all) return std::move(all).error();
    std::set<std::string> candidates;
    bool explicit_list = opts_.netdevs.has_value();
    if (explicit_list) {
      for (const auto& n : *opts_.netdevs) {
        if (std::find(all->begin(), all->end(), n) == all->end())
          return Fail(ENOENT, "no netdev '{}' in /class/net", n);
        candidates.insert(n);
      }
    } else {
      for (const auto& dev : out_.snapshot.rdma_devices) {
        if (dev.pci) {
          auto names = ListIfPresent(fmt::format("/bus/pci/devices/{}/net", dev.pci->ToString()));
          if (!names) return std::move(names).error();
          candidates.insert(names->begin(), names->end());
        }
        for (const auto& port : dev.ports)
          for (const auto& gid : port.gids)
            if (gid.ndev) candidates.insert(*gid.ndev);
      }
      if (!opts_.devices) {
        for (const auto& n : *all) {
          // On PCI (Hyper-V's accelerated-networking VF too); not a netvsc netdev on VMBus.
          if (auto pci = ClassDeviceParent("net", n); pci && *pci) candidates.insert(n);
        }
      }
    }
    for (const auto& name : candidates) {
      // A GID's ndev may be in another network namespace: not in this /sys.
      if (std::find(all->begin(), all->end(), name) == all->end()) continue;
      RXP_TRY(CheckNetdevName("netdev", name));
      auto pci = ClassDeviceParent("net", name);
      if (!pci) {
        if (explicit_list) return std::move(pci).error();
        Warn(fmt::format("skipped netdev {}: {}", name, pci.error().reason));
        continue;
      }
      Netdev nd;
      nd.name = name;
      nd.pci = *pci;
      nd.attrs = ReadAttrs("/class/net/" + name, NetAttrNames());
      WantNic(nd.pci);
      out_.snapshot.netdevs.push_back(std::move(nd));
    }
    return Ok();
  }

  Result<void> FindGpus() {
    auto names = ListIfPresent("/bus/pci/devices");
    if (!names) return std::move(names).error();
    for (const auto& name : *names) {
      auto bdf = TryParseBdf(name);
      if (!bdf) continue;
      auto cls = ReadAttr("/bus/pci/devices/" + name + "/class");
      auto vendor = ReadAttr("/bus/pci/devices/" + name + "/vendor");
      if (!cls || !*cls || !vendor || !*vendor) continue;
      auto c = ParseHex("class", **cls, 0xffffff);
      auto v = ParseHex("vendor", **vendor, 0xffff);
      if (c && v && (IsGpuClass(static_cast<uint32_t>(*c)) ||
                     IsNvSwitch(static_cast<uint32_t>(*c), static_cast<uint32_t>(*v))))
        pci_wanted_.insert(*bdf);
    }
    return Ok();
  }

  // The canonical chain of `bdf`, learnt from the realpath of /bus/pci/devices/<bdf>.
  Result<void> LearnChain(const Bdf& bdf) {
    if (chain_parent_.count(bdf)) return Ok();
    std::string link = "/bus/pci/devices/" + bdf.ToString();
    auto real = sys_.RealPath(link);
    if (!real) return Fail(real.error().errnum, "{}: {}", link, real.error().reason);
    auto pci = ParsePciPath(*real);
    if (!pci) return Fail(EINVAL, "{} -> {}: {}", link, Quote(*real), pci.error().reason);
    if (pci->chain.back() != bdf) return Fail(EINVAL, "{} resolves to another function {}", link, Quote(*real));
    RememberChain(*pci);
    return Ok();
  }

  // Each function of a parsed path, with its parent and its own directory (a prefix of the
  // path), and the root complex's parent when it is not /devices. Attributes are read there
  // rather than through /bus/pci/devices, which a trimmed capture (hwloc-gather-topology's) may
  // lack for a bridge; on a live kernel the two are the same directory.
  void RememberChain(const PciPath& pci) {
    std::string dir = "/devices/";
    if (!pci.root_parent.empty()) {
      dir += pci.root_parent + "/";
      // A bus id names one root complex: every path to it has the same parent.
      root_parents_.emplace(pci.chain.front().BusId(), pci.root_parent);
    }
    dir += pci.chain.front().RootName();
    for (size_t i = 0; i < pci.chain.size(); ++i) {
      dir += "/" + pci.chain[i].ToString();
      chain_parent_[pci.chain[i]] = i == 0 ? std::nullopt : std::optional<Bdf>(pci.chain[i - 1]);
      device_dir_[pci.chain[i]] = dir;
    }
  }

  Result<void> ReadPciClosure() {
    // NCCL (ncclIbGetPciPath, NCCL_IB_MERGE_VFS) rewrites a NIC's path to function 0 and, for
    // a VF, to its PF: both must exist in the tree.
    std::set<Bdf> extra;
    for (const Bdf& nic : nic_functions_) {
      Bdf fn0 = nic;
      fn0.fn = 0;
      if (sys_.Kind("/bus/pci/devices/" + fn0.ToString(), true).ok()) extra.insert(fn0);
      std::string physfn = fmt::format("/bus/pci/devices/{}/physfn", nic.ToString());
      if (sys_.Kind(physfn, false).ok()) {
        auto real = sys_.RealPath(physfn);
        if (!real) return std::move(real).error();
        auto pf = ParsePciPath(*real);
        if (!pf) return Fail(EINVAL, "{} -> {}: {}", physfn, Quote(*real), pf.error().reason);
        extra.insert(pf->chain.back());
      }
    }
    pci_wanted_.insert(extra.begin(), extra.end());
    std::set<Bdf> all;
    for (const Bdf& bdf : pci_wanted_) {
      RXP_TRY(LearnChain(bdf));
      for (std::optional<Bdf> cur = bdf; cur; cur = chain_parent_.at(*cur)) all.insert(*cur);
    }
    for (const Bdf& bdf : all) {
      PciFunction fn;
      fn.bdf = bdf;
      fn.parent = chain_parent_.at(bdf);
      auto known = device_dir_.find(bdf);
      std::string dir = known != device_dir_.end() ? known->second : "/bus/pci/devices/" + bdf.ToString();
      fn.attrs = ReadAttrs(dir, PciAttrNames());
      KeepMaskOverList(fn.attrs, "local_cpus", "local_cpulist", dir);
      // The first 64 bytes are what an unprivileged read gets; enough for hwloc.
      // A missing config is left out quietly (a fake root may have none); one that is there and
      // cannot be read, or is shorter than a header, is left out with a warning.
      if (auto config = sys_.ReadFile(dir + "/config", 64); config && config->size() == 64) {
        std::array<uint8_t, 64> bytes{};
        std::copy(config->begin(), config->end(), bytes.begin());
        fn.config = bytes;
      } else if (!config && config.error().errnum != ENOENT) {
        Warn(fmt::format("skipped {}/config: {}", dir, config.error().ToString()));
      } else if (config) {
        Warn(fmt::format("skipped {}/config: {} bytes, shorter than the 64 of a PCI header", dir,
                         config->size()));
      }
      if (auto driver = sys_.ReadLink(dir + "/driver")) {
        std::string_view d = *driver;
        fn.driver = std::string(d.substr(d.rfind('/') + 1));
      }
      if (sys_.Kind(dir + "/physfn", false).ok()) {
        auto real = sys_.RealPath(dir + "/physfn");
        if (!real) return std::move(real).error();
        auto pf = ParsePciPath(*real);
        if (!pf) return Fail(EINVAL, "{}/physfn: {}", dir, pf.error().reason);
        if (all.count(pf->chain.back())) fn.physfn = pf->chain.back();
      }
      if (!fn.parent)
        if (auto parent = root_parents_.find(bdf.BusId()); parent != root_parents_.end())
          out_.snapshot.pci_root_parents.insert(*parent);
      out_.snapshot.pci_functions.push_back(std::move(fn));
    }
    return Ok();
  }

  Result<void> ReadNuma() {
    if (!sys_.Kind("/devices/system/node", true).ok()) return Ok();
    Numa numa;
    numa.attrs = ReadAttrs("/devices/system/node", NumaAttrNames());
    auto names = sys_.ListDir("/devices/system/node");
    if (!names) return std::move(names).error();
    for (const auto& name : *names) {
      if (!name.starts_with("node")) continue;
      const std::string_view digits = std::string_view(name).substr(4);
      auto id = ParseDecimal("node", digits, Limits::kNumaNodes - 1);
      if (!id) {
        // "node" alone, or "nodeX", is not a node directory; a number past the limit is one.
        if (!digits.empty() && std::all_of(digits.begin(), digits.end(),
                                           [](char c) { return c >= '0' && c <= '9'; }))
          Warn(fmt::format("skipped NUMA node {}: ids above {} are not supported", Quote(name),
                           Limits::kNumaNodes - 1));
        continue;
      }
      std::string dir = "/devices/system/node/" + name;
      NumaNode node;
      node.id = static_cast<uint32_t>(*id);
      auto mask = ReadAttr(dir + "/cpumap");
      if (!mask) return Fail(mask.error().errnum, "{}/cpumap: {}", dir, mask.error().reason);
      node.cpumap = mask->value_or("");
      // A live kernel always has distance (at least the node's own "10"); a capture without
      // it (hwloc's hand-made test trees) stays without it: empty, and not rendered.
      auto distance = ReadAttr(dir + "/distance");
      if (!distance && distance.error().errnum != ENOENT)
        return Fail(distance.error().errnum, "{}/distance: {}", dir, distance.error().reason);
      if (distance) node.distance = distance->value_or("");
      // MemTotal, and MemFree only next to it and never above it (the renderer prints MemUsed
      // as their difference).
      if (auto meminfo = sys_.ReadFile(dir + "/meminfo", kAttrMax)) {
        node.mem_total_kb = MeminfoKb(*meminfo, dir + "/meminfo", "MemTotal");
        if (node.mem_total_kb) {
          node.mem_free_kb = MeminfoKb(*meminfo, dir + "/meminfo", "MemFree");
          if (node.mem_free_kb && *node.mem_free_kb > *node.mem_total_kb) node.mem_free_kb.reset();
        }
      }
      // cpulist came after cpumap (kernels before 2.6.27 have only the mask): then it is the
      // mask's list, as a later kernel would print it.
      auto list = ReadAttr(dir + "/cpulist");
      if (!list && list.error().errnum != ENOENT)
        return Fail(list.error().errnum, "{}/cpulist: {}", dir, list.error().reason);
      if (list) {
        node.cpulist = ListMatchingMask(node.cpumap, list->value_or(""), dir + "/cpulist");
      } else if (auto set = ParseCpuMask(node.cpumap)) {
        node.cpulist = set->ToList();
      }
      numa.nodes.push_back(std::move(node));
    }
    out_.snapshot.numa = std::move(numa);
    return Ok();
  }

  void ReadPeerMemory() {
    PeerMemory& pm = out_.snapshot.peer_memory;
    for (auto [path, out] : {std::pair{"/module/nvidia_peermem/version", &pm.nvidia_peermem},
                             std::pair{"/kernel/mm/memory_peers/nv_mem/version", &pm.nv_mem},
                             std::pair{"/kernel/mm/memory_peers/nv_mem_nc/version", &pm.nv_mem_nc}}) {
      auto v = ReadAttr(path);
      if (v && *v) *out = **v;
    }
  }

  const FsView& sys_;
  const ReadOptions& opts_;
  ReadResult out_;
  std::map<std::string, Uverbs> uverbs_by_ibdev_;
  std::set<Bdf> pci_wanted_;     // functions to include (with their ancestors)
  std::set<Bdf> nic_functions_;  // functions of RDMA devices and netdevs
  std::map<Bdf, std::optional<Bdf>> chain_parent_;
  std::map<Bdf, std::string> device_dir_;  // "/devices/pci0000:00/0000:00:01.0/..."
  std::map<std::string, std::string, std::less<>> root_parents_;  // Snapshot::pci_root_parents
};

}  // namespace

Result<PciPath> ParsePciPath(std::string_view real) {
  // /devices/[<parent>/]pciDDDD:BB/<bdf>/<bdf>...: pci_create_root_bus() below its parent
  // device (none, or Hyper-V's VMBus device), then device_add() per level.
  constexpr std::string_view kDevices = "/devices/";
  if (!real.starts_with(kDevices)) return Fail(EINVAL, "not below /devices");
  const std::vector<std::string_view> comps = PathComponents(real.substr(kDevices.size()));
  size_t r = 0;
  while (r < comps.size() && !TryParseRootName(comps[r])) ++r;
  if (r == comps.size())
    return Fail(EINVAL, "{} is not below a PCI root complex (pciDDDD:BB)", Quote(real));
  const std::string_view root = comps[r];
  PciPath out;
  for (size_t i = 0; i < r; ++i) {
    if (IsBdf(comps[i]))  // VMD: a root complex below a PCI function (and 32-bit domains)
      return Fail(EINVAL, "{} sits below PCI function {} (VMD layouts are unsupported)",
                  Quote(root), comps[i]);
    if (i > 0) out.root_parent += '/';
    out.root_parent += comps[i];
  }
  for (size_t i = r + 1; i < comps.size(); ++i) {
    auto bdf = ParseBdf(comps[i]);
    if (!bdf) return Fail(EINVAL, "component {} below {} is not a PCI function (VMD layouts are unsupported)",
                          Quote(comps[i]), root);
    out.chain.push_back(*bdf);
  }
  if (out.chain.empty()) return Fail(EINVAL, "{} is a root complex, not a function", Quote(real));
  if (out.chain.front().RootName() != root)
    return Fail(EINVAL, "{} sits below {}, which owns another bus", out.chain.front().ToString(), root);
  if (r > Limits::kRootParentDepth)
    return Fail(E2BIG, "{} sits {} directories below /devices; at most {} are supported", Quote(root),
                r, Limits::kRootParentDepth);
  return out;
}

Result<ReadResult> ReadSnapshot(const FsView& sys, const ReadOptions& options) {
  return Reader(sys, options).Run();
}

}  // namespace rxp::sysfs
