#include "sysfs/snapshot_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>

#include "abi/json_duplicate_keys.h"
#include "sysfs/cpuset.h"

namespace rxp::sysfs {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Attribute allow-lists. The PCI list is what NCCL (xml.cc), hwloc (linux PCI discovery),
// rdma-core (modalias, local_cpus) and ibdev2netdev (resource) read, plus SR-IOV geometry.
constexpr std::array<std::string_view, 22> kPciAttrs = {
    "class",           "vendor",           "device",           "subsystem_vendor",
    "subsystem_device", "revision",        "numa_node",        "local_cpus",
    "local_cpulist",   "max_link_speed",   "max_link_width",   "current_link_speed",
    "current_link_width", "modalias",      "uevent",           "resource",
    "sriov_numvfs",    "sriov_totalvfs",   "sriov_offset",     "sriov_stride",
    "secondary_bus_number",
    "subordinate_bus_number"};
// ib_device attributes (drivers/infiniband/core/sysfs.c) plus rxe/siw's `parent`.
constexpr std::array<std::string_view, 9> kIbAttrs = {
    "node_type", "node_guid", "sys_image_guid", "fw_ver", "hca_type",
    "hw_rev",    "board_id",  "node_desc",      "parent"};
// Port attributes read by ibstat (libibumad get_port) and hwloc.
constexpr std::array<std::string_view, 9> kPortAttrs = {
    "state", "phys_state", "rate", "lid", "lid_mask_count", "sm_lid", "sm_sl", "cap_mask",
    "link_layer"};
// net-sysfs.c attributes read by NCCL (speed), ibdev2netdev (dev_id, dev_port, carrier),
// hwloc (address, dev_port) and RxDM.
constexpr std::array<std::string_view, 17> kNetAttrs = {
    "address", "addr_assign_type", "addr_len", "broadcast", "carrier",  "dev_id",
    "dev_port", "duplex",          "flags",    "ifindex",   "iflink",   "link_mode",
    "mtu",     "operstate",        "speed",    "tx_queue_len", "type"};
constexpr std::array<std::string_view, 5> kNumaAttrs = {
    "online", "possible", "has_cpu", "has_memory", "has_normal_memory"};

// ---- JSON reading helpers: every accessor names the field path in its error. ----

const char* TypeName(const Json& j) { return j.type_name(); }

Result<void> CheckKeys(const Json& j, std::string_view path,
                       std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) return Fail(EINVAL, "{}: expected an object, got {}", path, TypeName(j));
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return Fail(EINVAL, "{}: unknown field {}", path, Quote(key));
  }
  return Ok();
}

std::string Join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

const Json* Field(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

Result<std::string> GetString(const Json& j, std::string_view path, size_t max_len) {
  if (!j.is_string()) return Fail(EINVAL, "{}: expected a string, got {}", path, TypeName(j));
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() > max_len) return Fail(EINVAL, "{}: string of {} bytes exceeds {}", path, s.size(), max_len);
  if (s.find('\0') != std::string::npos) return Fail(EINVAL, "{}: string contains NUL", path);
  return s;
}

Result<uint64_t> GetUint(const Json& j, std::string_view path, uint64_t max) {
  if (!j.is_number_unsigned())
    return Fail(EINVAL, "{}: expected a non-negative integer, got {}", path,
                j.is_number_integer() ? "a negative number" : TypeName(j));
  auto v = j.get<uint64_t>();
  if (v > max) return Fail(ERANGE, "{}: {} exceeds {}", path, v, max);
  return v;
}

Result<const Json*> Required(const Json& obj, std::string_view path, std::string_view key) {
  const Json* f = Field(obj, key);
  if (f == nullptr) return Fail(EINVAL, "{}: missing field '{}'", path, key);
  return f;
}

// A field that must be there, as a string / as a bounded unsigned integer.
Result<std::string> RequiredString(const Json& obj, std::string_view path, std::string_view key, size_t max_len) {
  auto f = Required(obj, path, key);
  if (!f) return std::move(f).error();
  return GetString(**f, Join(path, key), max_len);
}

Result<uint64_t> RequiredUint(const Json& obj, std::string_view path, std::string_view key, uint64_t max) {
  auto f = Required(obj, path, key);
  if (!f) return std::move(f).error();
  return GetUint(**f, Join(path, key), max);
}

Result<std::optional<Bdf>> GetOptionalBdf(const Json& obj, std::string_view path,
                                          std::string_view key) {
  const Json* f = Field(obj, key);
  if (f == nullptr || f->is_null()) return std::optional<Bdf>{};
  auto s = GetString(*f, Join(path, key), 64);
  if (!s) return std::move(s).error();
  auto bdf = ParseBdf(*s);
  if (!bdf) return Fail(EINVAL, "{}: {}", Join(path, key), bdf.error().reason);
  return std::optional<Bdf>{*bdf};
}

Result<std::optional<std::string>> GetOptionalString(const Json& obj, std::string_view path,
                                                     std::string_view key, size_t max_len) {
  const Json* f = Field(obj, key);
  if (f == nullptr || f->is_null()) return std::optional<std::string>{};
  auto s = GetString(*f, Join(path, key), max_len);
  if (!s) return std::move(s).error();
  return std::optional<std::string>{std::move(*s)};
}

template <typename T, typename F>
Result<std::vector<T>> GetArray(const Json& obj, std::string_view path, std::string_view key,
                                size_t max_count, F&& parse_one) {
  std::vector<T> out;
  const Json* f = Field(obj, key);
  if (f == nullptr) return out;
  if (!f->is_array())
    return Fail(EINVAL, "{}: expected an array, got {}", Join(path, key), TypeName(*f));
  if (f->size() > max_count)
    return Fail(E2BIG, "{}: {} entries exceed the limit of {}", Join(path, key), f->size(), max_count);
  out.reserve(f->size());
  for (size_t i = 0; i < f->size(); ++i) {
    auto item = parse_one((*f)[i], fmt::format("{}[{}]", Join(path, key), i));
    if (!item) return std::move(item).error();
    out.push_back(std::move(*item));
  }
  return out;
}

Result<Attrs> GetAttrs(const Json& obj, std::string_view path) {
  Attrs attrs;
  const Json* f = Field(obj, "attrs");
  if (f == nullptr) return attrs;
  std::string apath = fmt::format("{}.attrs", path);
  if (!f->is_object()) return Fail(EINVAL, "{}: expected an object, got {}", apath, TypeName(*f));
  for (const auto& [key, value] : f->items()) {
    if (value.is_null()) {
      attrs.emplace(key, std::nullopt);
      continue;
    }
    auto s = GetString(value, fmt::format("{}.{}", apath, Quote(key)), Limits::kAttrBytes);
    if (!s) return std::move(s).error();
    attrs.emplace(key, std::move(*s));
  }
  return attrs;
}

int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Result<std::array<uint8_t, 64>> ParseConfigHex(std::string_view hex, std::string_view path) {
  std::array<uint8_t, 64> out{};
  if (hex.size() != 128)
    return Fail(EINVAL, "{}: expected 128 hex digits (64 bytes), got {} characters", path, hex.size());
  for (size_t i = 0; i < 64; ++i) {
    int hi = HexNibble(hex[2 * i]), lo = HexNibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Fail(EINVAL, "{}: not lower-case hex", path);
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return out;
}

// ---- Per-object parsers. ----

Result<PciFunction> ParsePci(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"bdf", "parent", "attrs", "config", "driver", "physfn"}));
  PciFunction fn;
  auto bdf_text = RequiredString(j, path, "bdf", 64);
  if (!bdf_text) return std::move(bdf_text).error();
  auto bdf = ParseBdf(*bdf_text);
  if (!bdf) return Fail(EINVAL, "{}.bdf: {}", path, bdf.error().reason);
  fn.bdf = *bdf;
  auto parent = GetOptionalBdf(j, path, "parent");
  if (!parent) return std::move(parent).error();
  fn.parent = *parent;
  auto physfn = GetOptionalBdf(j, path, "physfn");
  if (!physfn) return std::move(physfn).error();
  fn.physfn = *physfn;
  auto attrs = GetAttrs(j, path);
  if (!attrs) return std::move(attrs).error();
  fn.attrs = std::move(*attrs);
  auto config = GetOptionalString(j, path, "config", 256);
  if (!config) return std::move(config).error();
  if (*config) {
    auto bytes = ParseConfigHex(**config, path + ".config");
    if (!bytes) return std::move(bytes).error();
    fn.config = *bytes;
  }
  auto driver = GetOptionalString(j, path, "driver", 255);
  if (!driver) return std::move(driver).error();
  fn.driver = std::move(*driver);
  return fn;
}

Result<Gid> ParseGid(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"index", "gid", "type", "ndev"}));
  Gid gid;
  auto idx = RequiredUint(j, path, "index", Limits::kGidTableLen - 1);
  if (!idx) return std::move(idx).error();
  gid.index = static_cast<uint32_t>(*idx);
  auto gs = RequiredString(j, path, "gid", 64);
  if (!gs) return std::move(gs).error();
  gid.gid = std::move(*gs);
  auto ts = RequiredString(j, path, "type", 64);
  if (!ts) return std::move(ts).error();
  gid.type = std::move(*ts);
  auto ndev = GetOptionalString(j, path, "ndev", 64);
  if (!ndev) return std::move(ndev).error();
  gid.ndev = std::move(*ndev);
  return gid;
}

Result<Port> ParsePort(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"port", "attrs", "gid_table_len", "gids", "pkeys"}));
  Port port;
  auto n = RequiredUint(j, path, "port", 255);
  if (!n) return std::move(n).error();
  port.number = static_cast<uint32_t>(*n);
  auto attrs = GetAttrs(j, path);
  if (!attrs) return std::move(attrs).error();
  port.attrs = std::move(*attrs);
  if (const Json* len = Field(j, "gid_table_len")) {
    auto l = GetUint(*len, path + ".gid_table_len", Limits::kGidTableLen);
    if (!l) return std::move(l).error();
    port.gid_table_len = static_cast<uint32_t>(*l);
  }
  auto gids = GetArray<Gid>(j, path, "gids", Limits::kGidTableLen, ParseGid);
  if (!gids) return std::move(gids).error();
  port.gids = std::move(*gids);
  auto pkeys = GetArray<std::string>(j, path, "pkeys", Limits::kPkeysPerPort,
                                     [](const Json& v, const std::string& p) { return GetString(v, p, 16); });
  if (!pkeys) return std::move(pkeys).error();
  port.pkeys = std::move(*pkeys);
  return port;
}

Result<Uverbs> ParseUverbs(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"name", "dev", "abi_version", "host_name", "host_dev"}));
  Uverbs uv;
  auto ns = RequiredString(j, path, "name", 64);
  if (!ns) return std::move(ns).error();
  uv.name = std::move(*ns);
  auto ds = RequiredString(j, path, "dev", 32);
  if (!ds) return std::move(ds).error();
  auto dn = ParseDevNum(*ds);
  if (!dn) return Fail(EINVAL, "{}.dev: {}", path, dn.error().reason);
  uv.dev = *dn;
  if (const Json* abi = Field(j, "abi_version"); abi != nullptr && !abi->is_null()) {
    auto a = GetUint(*abi, path + ".abi_version", 1000);
    if (!a) return std::move(a).error();
    uv.abi_version = static_cast<uint32_t>(*a);
  }
  auto host_name = GetOptionalString(j, path, "host_name", 64);
  if (!host_name) return std::move(host_name).error();
  uv.host_name = std::move(*host_name);
  auto host_dev = GetOptionalString(j, path, "host_dev", 32);
  if (!host_dev) return std::move(host_dev).error();
  if (*host_dev) {
    auto hd = ParseDevNum(**host_dev);
    if (!hd) return Fail(EINVAL, "{}.host_dev: {}", path, hd.error().reason);
    uv.host_dev = *hd;
  }
  return uv;
}

Result<RdmaDevice> ParseRdma(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"name", "pci", "attrs", "ports", "uverbs"}));
  RdmaDevice dev;
  auto ns = RequiredString(j, path, "name", 255);
  if (!ns) return std::move(ns).error();
  dev.name = std::move(*ns);
  auto pci = GetOptionalBdf(j, path, "pci");
  if (!pci) return std::move(pci).error();
  dev.pci = *pci;
  auto attrs = GetAttrs(j, path);
  if (!attrs) return std::move(attrs).error();
  dev.attrs = std::move(*attrs);
  auto ports = GetArray<Port>(j, path, "ports", Limits::kPortsPerDevice, ParsePort);
  if (!ports) return std::move(ports).error();
  dev.ports = std::move(*ports);
  if (const Json* uv = Field(j, "uverbs"); uv != nullptr && !uv->is_null()) {
    auto u = ParseUverbs(*uv, path + ".uverbs");
    if (!u) return std::move(u).error();
    dev.uverbs = std::move(*u);
  }
  return dev;
}

Result<Netdev> ParseNetdev(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"name", "pci", "attrs"}));
  Netdev nd;
  auto ns = RequiredString(j, path, "name", 255);
  if (!ns) return std::move(ns).error();
  nd.name = std::move(*ns);
  auto pci = GetOptionalBdf(j, path, "pci");
  if (!pci) return std::move(pci).error();
  nd.pci = *pci;
  auto attrs = GetAttrs(j, path);
  if (!attrs) return std::move(attrs).error();
  nd.attrs = std::move(*attrs);
  return nd;
}

Result<NumaNode> ParseNumaNode(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"id", "cpumap", "cpulist", "distance", "mem_total_kb", "mem_free_kb"}));
  NumaNode node;
  auto i = RequiredUint(j, path, "id", Limits::kNumaNodes - 1);
  if (!i) return std::move(i).error();
  node.id = static_cast<uint32_t>(*i);
  for (auto [key, out] : {std::pair{"cpumap", &node.cpumap}, std::pair{"cpulist", &node.cpulist},
                          std::pair{"distance", &node.distance}}) {
    auto s = RequiredString(j, path, key, Limits::kAttrBytes);
    if (!s) return std::move(s).error();
    *out = std::move(*s);
  }
  if (const Json* mem = Field(j, "mem_total_kb"); mem != nullptr && !mem->is_null()) {
    auto kb = GetUint(*mem, path + ".mem_total_kb", Limits::kNodeMemKb);
    if (!kb) return std::move(kb).error();
    node.mem_total_kb = *kb;
  }
  if (const Json* mem = Field(j, "mem_free_kb"); mem != nullptr && !mem->is_null()) {
    auto kb = GetUint(*mem, path + ".mem_free_kb", Limits::kNodeMemKb);
    if (!kb) return std::move(kb).error();
    if (!node.mem_total_kb || *kb > *node.mem_total_kb)
      return Fail(EINVAL, "{}.mem_free_kb: {} kB needs a mem_total_kb of at least that", path, *kb);
    node.mem_free_kb = *kb;
  }
  return node;
}

Result<Numa> ParseNuma(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"attrs", "nodes"}));
  Numa numa;
  auto attrs = GetAttrs(j, path);
  if (!attrs) return std::move(attrs).error();
  numa.attrs = std::move(*attrs);
  auto nodes = GetArray<NumaNode>(j, path, "nodes", Limits::kNumaNodes, ParseNumaNode);
  if (!nodes) return std::move(nodes).error();
  numa.nodes = std::move(*nodes);
  return numa;
}

Result<PeerMemory> ParsePeerMemory(const Json& j, const std::string& path) {
  RXP_TRY(CheckKeys(j, path, {"nvidia_peermem", "nv_mem", "nv_mem_nc"}));
  PeerMemory pm;
  for (auto [key, out] : {std::pair{"nvidia_peermem", &pm.nvidia_peermem},
                          std::pair{"nv_mem", &pm.nv_mem}, std::pair{"nv_mem_nc", &pm.nv_mem_nc}}) {
    auto s = GetOptionalString(j, path, key, Limits::kAttrBytes);
    if (!s) return std::move(s).error();
    *out = std::move(*s);
  }
  return pm;
}

// pci_root_parents: an object of strings, bounded in count and length. Keys and values are
// checked by Validate (ValidateRootParents), like every other name.
Result<std::map<std::string, std::string, std::less<>>> ParseRootParents(const Json& j,
                                                                         const std::string& path) {
  if (!j.is_object()) return Fail(EINVAL, "{}: expected an object, got {}", path, TypeName(j));
  if (j.size() > Limits::kPciFunctions)
    return Fail(E2BIG, "{}: {} entries exceed the limit of {}", path, j.size(),
                Limits::kPciFunctions);
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [key, value] : j.items()) {
    auto v = GetString(value, fmt::format("{}.{}", path, Quote(key)), Limits::kRootParentBytes);
    if (!v) return std::move(v).error();
    out.emplace(key, std::move(*v));
  }
  return out;
}

// Rejects nesting deeper than the schema has, before nlohmann builds (and recursively
// destroys) a DOM for it: a hostile "[[[[..." must not exhaust the stack.
Result<void> CheckNesting(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > Limits::kJsonDepth)
        return Fail(EINVAL, "JSON nested deeper than {} levels at byte {}", Limits::kJsonDepth, i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Ok();
}

// ---- Validation. ----

Result<void> CheckAttrs(const Attrs& attrs, std::span<const std::string_view> allowed,
                        std::string_view path) {
  for (const auto& [key, value] : attrs) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return Fail(EINVAL, "{}.attrs: attribute {} is not one the schema knows", path, Quote(key));
    if (value && (value->size() > Limits::kAttrBytes || value->find('\0') != std::string::npos))
      return Fail(EINVAL, "{}.attrs.{}: value too long or contains NUL", path, key);
  }
  return Ok();
}

Result<void> CheckGidText(std::string_view gid, std::string_view path) {
  // The kernel prints GIDs with "%pI6": eight groups of four lower-case hex digits.
  if (gid.size() != 39) return Fail(EINVAL, "{}: {} is not a GID (%pI6 form)", path, Quote(gid));
  for (size_t i = 0; i < gid.size(); ++i) {
    bool colon = i % 5 == 4;
    if (colon ? gid[i] != ':' : HexNibble(gid[i]) < 0)
      return Fail(EINVAL, "{}: {} is not a GID (%pI6 form)", path, Quote(gid));
  }
  return Ok();
}

Result<void> ValidateNuma(const Numa& numa) {
  RXP_TRY(CheckAttrs(numa.attrs, kNumaAttrs, "numa"));
  for (const auto& [key, value] : numa.attrs) {
    if (!value) continue;
    auto set = ParseCpuList(*value);  // node lists use the cpulist syntax
    if (!set) return Fail(EINVAL, "numa.attrs.{}: {}", key, set.error().reason);
  }
  for (size_t i = 0; i < numa.nodes.size(); ++i) {
    const NumaNode& n = numa.nodes[i];
    std::string path = fmt::format("numa.nodes[{}]", i);
    if (i > 0 && numa.nodes[i - 1].id >= n.id)
      return Fail(EINVAL, "{}: duplicate NUMA node id {}", path, n.id);
    auto mask = ParseCpuMask(n.cpumap);
    if (!mask) return Fail(EINVAL, "{}.cpumap: {}", path, mask.error().reason);
    auto list = ParseCpuList(n.cpulist);
    if (!list) return Fail(EINVAL, "{}.cpulist: {}", path, list.error().reason);
    if (!(*mask == *list))
      return Fail(EINVAL, "{}: cpumap {} and cpulist {} disagree", path, n.cpumap, n.cpulist);
    size_t count = 0;
    size_t pos = 0;
    while (pos < n.distance.size()) {
      size_t sp = n.distance.find(' ', pos);
      auto d = ParseDecimal(path + ".distance", n.distance.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos), 255);
      if (!d) return std::move(d).error();
      if (++count > Limits::kNumaNodes) return Fail(E2BIG, "{}.distance: too many entries", path);
      if (sp == std::string::npos) break;
      pos = sp + 1;
    }
    // node_read_distance() prints one entry per online node, and the snapshot keeps them all.
    if (!n.distance.empty() && count != numa.nodes.size())
      return Fail(EINVAL, "{}.distance: {} entries for {} NUMA nodes", path, count,
                  numa.nodes.size());
  }
  return Ok();
}

Result<void> ValidatePci(const Snapshot& s) {
  const auto& fns = s.pci_functions;
  if (fns.size() > Limits::kPciFunctions)
    return Fail(E2BIG, "pci_functions: {} entries exceed {}", fns.size(), Limits::kPciFunctions);
  std::map<Bdf, size_t> index;
  for (size_t i = 0; i < fns.size(); ++i) {
    if (!index.emplace(fns[i].bdf, i).second)
      return Fail(EEXIST, "pci_functions: duplicate BDF {}", fns[i].bdf.ToString());
  }
  // Which bridge owns a bus (none: a root complex), and the one bus below each bridge.
  std::map<std::pair<uint16_t, uint8_t>, std::optional<Bdf>> bus_owner;
  std::map<Bdf, uint8_t> secondary_of;
  for (size_t i = 0; i < fns.size(); ++i) {
    const PciFunction& fn = fns[i];
    std::string path = fmt::format("pci_functions[{}] ({})", i, fn.bdf.ToString());
    RXP_TRY(CheckAttrs(fn.attrs, kPciAttrs, path));
    auto cls = PciClass(fn);
    if (!cls) return Fail(EINVAL, "{}: missing or malformed 'class' attribute", path);
    if (fn.driver) RXP_TRY(CheckComponent(path + ".driver", *fn.driver));
    if (auto it = fn.attrs.find("numa_node"); it != fn.attrs.end() && it->second) {
      auto node = NumaNodeOf(fn);
      if (!node) return Fail(EINVAL, "{}.attrs.numa_node: {} is not an integer >= -1", path, Quote(*it->second));
      if (*node >= 0) {
        bool known = s.numa && std::any_of(s.numa->nodes.begin(), s.numa->nodes.end(),
                                           [&](const NumaNode& n) { return n.id == static_cast<uint32_t>(*node); });
        if (!known) return Fail(ENOENT, "{}: numa_node {} is not in numa.nodes", path, *node);
      }
    }
    std::optional<CpuSet> mask, list;
    if (auto it = fn.attrs.find("local_cpus"); it != fn.attrs.end() && it->second) {
      auto m = ParseCpuMask(*it->second);
      if (!m) return Fail(EINVAL, "{}.attrs.local_cpus: {}", path, m.error().reason);
      mask = std::move(*m);
    }
    if (auto it = fn.attrs.find("local_cpulist"); it != fn.attrs.end() && it->second) {
      auto l = ParseCpuList(*it->second);
      if (!l) return Fail(EINVAL, "{}.attrs.local_cpulist: {}", path, l.error().reason);
      list = std::move(*l);
    }
    if (mask && list && !(*mask == *list))
      return Fail(EINVAL, "{}: local_cpus and local_cpulist disagree", path);
    if (fn.physfn) {
      // A VF's PF is another function that is no VF itself and no bridge (pci_iov_add_virtfn:
      // physfn and virtfnN link a VF and its PF, one level).
      if (*fn.physfn == fn.bdf) return Fail(EINVAL, "{}: physfn names the function itself", path);
      auto pf = index.find(*fn.physfn);
      if (pf == index.end())
        return Fail(ENOENT, "{}: physfn {} is not in pci_functions", path, fn.physfn->ToString());
      const PciFunction& pf_fn = fns[pf->second];
      if (pf_fn.physfn)
        return Fail(EINVAL, "{}: physfn {} is itself a VF (of {})", path, fn.physfn->ToString(),
                    pf_fn.physfn->ToString());
      if (auto pf_cls = PciClass(pf_fn); pf_cls && IsBridgeClass(*pf_cls))
        return Fail(EINVAL, "{}: physfn {} is a bridge, not a PF", path, fn.physfn->ToString());
      if (pf_fn.parent != fn.parent)
        return Fail(EINVAL, "{}: a VF must sit under the same bridge as its PF {}", path,
                    fn.physfn->ToString());
    }
    // The parent chain: exists, is a bridge, terminates (no cycle), bounded depth.
    std::optional<Bdf> cur = fn.parent;
    size_t depth = 0;
    while (cur) {
      auto it = index.find(*cur);
      if (it == index.end())
        return Fail(ENOENT, "{}: parent {} is not in pci_functions", path, cur->ToString());
      const PciFunction& p = fns[it->second];
      auto pcls = PciClass(p);
      if (!pcls || !IsBridgeClass(*pcls))
        return Fail(EINVAL, "{}: parent {} is not a PCI-to-PCI bridge (class 0x0604xx)", path,
                    cur->ToString());
      if (p.bdf == fn.bdf || ++depth > Limits::kPciDepth)
        return Fail(ELOOP, "{}: PCI parent chain loops or is deeper than {}", path, Limits::kPciDepth);
      cur = p.parent;
    }
    // Bus numbering: all children of one bridge (or root) share a bus that no other owns.
    auto key = std::pair{fn.bdf.domain, fn.bdf.bus};
    auto [owner, inserted] = bus_owner.emplace(key, fn.parent);
    if (!inserted && owner->second != fn.parent)
      return Fail(EINVAL, "{}: bus {} is also reached through {}; a bus belongs to one bridge",
                  path, fn.bdf.BusId(), owner->second ? owner->second->ToString() : "its root complex");
    if (fn.parent && fn.parent->domain != fn.bdf.domain)
      return Fail(EINVAL, "{}: parent {} is in another PCI domain", path, fn.parent->ToString());
    if (fn.parent) {
      auto [sec, fresh] = secondary_of.emplace(*fn.parent, fn.bdf.bus);
      if (!fresh && sec->second != fn.bdf.bus)
        return Fail(EINVAL, "{}: bridge {} has children on buses {:02x} and {:02x}; a bridge has one secondary bus",
                    path, fn.parent->ToString(), sec->second, fn.bdf.bus);
    }
    if (fn.parent && fn.parent->bus == fn.bdf.bus)
      return Fail(EINVAL, "{}: on the same bus as its parent bridge {}", path, fn.parent->ToString());
  }
  // A bridge's bus number attributes, where present, must be numbers, and name the bus its
  // children are on (the config space, checked next, says the same to hwloc).
  for (const PciFunction& fn : fns) {
    auto secondary = BusNumberAttr(fn, "secondary_bus_number");
    if (!secondary) return std::move(secondary).error();
    auto subordinate = BusNumberAttr(fn, "subordinate_bus_number");
    if (!subordinate) return std::move(subordinate).error();
    auto children = secondary_of.find(fn.bdf);
    if (children == secondary_of.end()) continue;
    if (*secondary && **secondary != children->second)
      return Fail(EINVAL, "pci_functions ({}): secondary_bus_number says bus {:02x}, but its "
                  "children are on bus {:02x}", fn.bdf.ToString(), **secondary, children->second);
    if (*subordinate && **subordinate < children->second)
      return Fail(EINVAL, "pci_functions ({}): subordinate_bus_number {:02x} is below its "
                  "children's bus {:02x}", fn.bdf.ToString(), **subordinate, children->second);
  }
  // A bridge's config space, when present, must name the bus its children are on (hwloc
  // places devices by these numbers, NCCL by the directory nesting; they must agree).
  for (const auto& [bus, owner] : bus_owner) {
    if (!owner) continue;
    const PciFunction& bridge = fns[index.at(*owner)];
    if (bridge.config) {
      uint8_t secondary = (*bridge.config)[0x19], subordinate = (*bridge.config)[0x1a];
      if (bus.second != secondary || subordinate < secondary)
        return Fail(EINVAL, "pci_functions ({}): config says secondary bus {:02x} (subordinate {:02x}), but its children are on bus {:02x}",
                    owner->ToString(), secondary, subordinate, bus.second);
    }
  }
  return Ok();
}

// A root complex's parent is a path of plain device names below /sys/devices: no root complex
// or function among them (a root below a PCI function is VMD, whose domains are not
// supported), and not the kernel's own /sys/devices/{system,virtual}.
Result<void> CheckRootParent(const std::string& path, std::string_view parent) {
  if (parent.size() > Limits::kRootParentBytes)
    return Fail(ENAMETOOLONG, "{}: longer than {} bytes", path, Limits::kRootParentBytes);
  size_t count = 0;
  for (size_t pos = 0;;) {
    const size_t slash = parent.find('/', pos);
    const std::string_view comp = parent.substr(pos, slash - pos);  // to the end when npos
    if (++count > Limits::kRootParentDepth)
      return Fail(E2BIG, "{}: more than {} components", path, Limits::kRootParentDepth);
    RXP_TRY(CheckComponent(path, comp));
    if (TryParseRootName(comp) || IsBdf(comp))
      return Fail(EINVAL, "{}: component {} is a PCI root complex or function; roots below PCI "
                  "(VMD) are not supported", path, Quote(comp));
    if (count == 1 && (comp == "system" || comp == "virtual"))
      return Fail(EINVAL, "{}: /sys/devices/{} is the kernel's own directory, not a device", path,
                  comp);
    if (slash == std::string_view::npos) return Ok();
    pos = slash + 1;
  }
}

// Each listed bus must be the root bus of some function (a dangling entry is a typo).
Result<void> ValidateRootParents(const Snapshot& s) {
  for (const auto& entry : s.pci_root_parents) {
    // Not a structured binding: clang before 16 cannot capture one in the lambda below.
    const std::string& bus_id = entry.first;
    const std::string& parent = entry.second;
    const std::string path = fmt::format("pci_root_parents.{}", Quote(bus_id));
    if (!TryParseBusId(bus_id)) return Fail(EINVAL, "{}: not a root bus id of the form dddd:bb", path);
    const bool on_root = std::any_of(s.pci_functions.begin(), s.pci_functions.end(),
                                     [&](const PciFunction& fn) { return !fn.parent && fn.bdf.BusId() == bus_id; });
    if (!on_root) return Fail(EINVAL, "{}: no PCI function sits on root bus {}", path, bus_id);
    RXP_TRY(CheckRootParent(path, parent));
  }
  return Ok();
}

Result<void> ValidateRdma(const Snapshot& s) {
  if (s.rdma_devices.size() > Limits::kRdmaDevices)
    return Fail(E2BIG, "rdma_devices: {} entries exceed {}", s.rdma_devices.size(), Limits::kRdmaDevices);
  size_t gid_total = 0, pkey_total = 0;
  std::set<std::string, std::less<>> uverbs_names;
  std::set<DevNum> uverbs_devs;
  for (size_t i = 0; i < s.rdma_devices.size(); ++i) {
    const RdmaDevice& d = s.rdma_devices[i];
    std::string path = fmt::format("rdma_devices[{}]", i);
    RXP_TRY(CheckIbdevName(path + ".name", d.name));
    if (i > 0 && s.rdma_devices[i - 1].name == d.name)
      return Fail(EEXIST, "{}: duplicate RDMA device {}", path, Quote(d.name));
    if (d.pci && !s.FindPci(*d.pci))
      return Fail(ENOENT, "{} ({}): pci {} is not in pci_functions", path, d.name, d.pci->ToString());
    // An RDMA driver binds an endpoint function; a bridge (pcieport's) holding one would put
    // a NIC between hwloc's and NCCL's bridges and their children.
    if (d.pci)
      if (auto cls = PciClass(*s.FindPci(*d.pci)); cls && IsBridgeClass(*cls))
        return Fail(EINVAL, "{} ({}): pci {} is a PCI-to-PCI bridge, not a device", path, d.name,
                    d.pci->ToString());
    RXP_TRY(CheckAttrs(d.attrs, kIbAttrs, path));
    for (size_t p = 0; p < d.ports.size(); ++p) {
      const Port& port = d.ports[p];
      std::string ppath = fmt::format("{}.ports[{}]", path, p);
      if (p > 0 && d.ports[p - 1].number >= port.number)
        return Fail(EEXIST, "{}: duplicate port {}", ppath, port.number);
      // Port 0 is a switch's management port; a CA's ports count from 1 (rdma_start_port()).
      if (port.number == 0) {
        auto type = d.attrs.find("node_type");
        if (type == d.attrs.end() || !type->second || !type->second->starts_with("2"))
          return Fail(EINVAL, "{}: port 0 exists only on a switch (node_type 2)", ppath);
      }
      RXP_TRY(CheckAttrs(port.attrs, kPortAttrs, ppath));
      gid_total += port.gid_table_len;
      pkey_total += port.pkeys.size();
      if (gid_total > Limits::kGidEntriesTotal)
        return Fail(E2BIG, "{}: more than {} GID table entries in all", ppath, Limits::kGidEntriesTotal);
      if (pkey_total > Limits::kPkeysTotal)
        return Fail(E2BIG, "{}: more than {} pkeys in all", ppath, Limits::kPkeysTotal);
      for (size_t g = 0; g < port.gids.size(); ++g) {
        const Gid& gid = port.gids[g];
        std::string gpath = fmt::format("{}.gids[{}]", ppath, g);
        if (gid.index >= port.gid_table_len)
          return Fail(ERANGE, "{}: index {} is outside gid_table_len {}", gpath, gid.index, port.gid_table_len);
        if (g > 0 && port.gids[g - 1].index >= gid.index)
          return Fail(EINVAL, "{}: GID indexes must be unique and ascending", gpath);
        RXP_TRY(CheckGidText(gid.gid, gpath + ".gid"));
        if (gid.type != "IB/RoCE v1" && gid.type != "RoCE v2")
          return Fail(EINVAL, "{}.type: {} is not 'IB/RoCE v1' or 'RoCE v2'", gpath, Quote(gid.type));
        if (gid.ndev) RXP_TRY(CheckNetdevName(gpath + ".ndev", *gid.ndev));
      }
      for (size_t k = 0; k < port.pkeys.size(); ++k) {
        auto v = ParseHex(fmt::format("{}.pkeys[{}]", ppath, k), port.pkeys[k], 0xffff);
        if (!v) return std::move(v).error();
        if (!port.pkeys[k].starts_with("0x"))
          return Fail(EINVAL, "{}.pkeys[{}]: expected 0x-prefixed hex", ppath, k);
      }
    }
    if (d.uverbs) {
      const Uverbs& uv = *d.uverbs;
      RXP_TRY(CheckUverbsName(path + ".uverbs.name", uv.name));
      if (!uverbs_names.insert(uv.name).second)
        return Fail(EEXIST, "{}.uverbs.name: {} is used by two devices", path, uv.name);
      if (!uverbs_devs.insert(uv.dev).second)
        return Fail(EEXIST, "{}.uverbs.dev: {}:{} is used by two devices", path, uv.dev.major,
                    uv.dev.minor);
      if (uv.host_name) RXP_TRY(CheckUverbsName(path + ".uverbs.host_name", *uv.host_name));
      if (uv.host_name.has_value() != uv.host_dev.has_value())
        return Fail(EINVAL, "{}.uverbs: host_name and host_dev come together", path);
    }
  }
  return Ok();
}

Result<void> ValidateNetdevs(const Snapshot& s) {
  if (s.netdevs.size() > Limits::kNetdevs)
    return Fail(E2BIG, "netdevs: {} entries exceed {}", s.netdevs.size(), Limits::kNetdevs);
  for (size_t i = 0; i < s.netdevs.size(); ++i) {
    const Netdev& n = s.netdevs[i];
    std::string path = fmt::format("netdevs[{}]", i);
    RXP_TRY(CheckNetdevName(path + ".name", n.name));
    if (i > 0 && s.netdevs[i - 1].name == n.name)
      return Fail(EEXIST, "{}: duplicate netdev {}", path, Quote(n.name));
    if (n.pci && !s.FindPci(*n.pci))
      return Fail(ENOENT, "{} ({}): pci {} is not in pci_functions", path, n.name, n.pci->ToString());
    RXP_TRY(CheckAttrs(n.attrs, kNetAttrs, path));
  }
  return Ok();
}

// ---- Serialization. ----

OrderedJson AttrsJson(const Attrs& attrs) {
  OrderedJson j = OrderedJson::object();
  for (const auto& [k, v] : attrs) j[k] = v ? OrderedJson(*v) : OrderedJson(nullptr);
  return j;
}

std::string ConfigHex(const std::array<uint8_t, 64>& config) {
  std::string out;
  out.reserve(128);
  for (uint8_t b : config) out += fmt::format("{:02x}", b);
  return out;
}

template <typename T, typename Key>
void SortBy(std::vector<T>& v, Key key) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

}  // namespace

std::span<const std::string_view> PciAttrNames() { return kPciAttrs; }
std::span<const std::string_view> IbAttrNames() { return kIbAttrs; }
std::span<const std::string_view> PortAttrNames() { return kPortAttrs; }
std::span<const std::string_view> NetAttrNames() { return kNetAttrs; }
std::span<const std::string_view> NumaAttrNames() { return kNumaAttrs; }

const PciFunction* Snapshot::FindPci(const Bdf& bdf) const {
  auto it = std::lower_bound(pci_functions.begin(), pci_functions.end(), bdf,
                             [](const PciFunction& f, const Bdf& b) { return f.bdf < b; });
  return it != pci_functions.end() && it->bdf == bdf ? &*it : nullptr;
}

const RdmaDevice* Snapshot::FindRdma(std::string_view name) const {
  auto it = std::lower_bound(rdma_devices.begin(), rdma_devices.end(), name,
                             [](const RdmaDevice& d, std::string_view n) { return d.name < n; });
  return it != rdma_devices.end() && it->name == name ? &*it : nullptr;
}

const Netdev* Snapshot::FindNetdev(std::string_view name) const {
  auto it = std::lower_bound(netdevs.begin(), netdevs.end(), name,
                             [](const Netdev& d, std::string_view n) { return d.name < n; });
  return it != netdevs.end() && it->name == name ? &*it : nullptr;
}

void Canonicalize(Snapshot* s) {
  SortBy(s->pci_functions, [](const PciFunction& f) { return f.bdf; });
  SortBy(s->rdma_devices, [](const RdmaDevice& d) { return d.name; });
  SortBy(s->netdevs, [](const Netdev& n) { return n.name; });
  for (auto& d : s->rdma_devices) {
    SortBy(d.ports, [](const Port& p) { return p.number; });
    for (auto& p : d.ports) SortBy(p.gids, [](const Gid& g) { return g.index; });
  }
  if (s->numa) SortBy(s->numa->nodes, [](const NumaNode& n) { return n.id; });
}

std::optional<uint32_t> PciClass(const PciFunction& fn) {
  auto it = fn.attrs.find("class");
  if (it == fn.attrs.end() || !it->second) return std::nullopt;
  auto v = ParseHex("class", *it->second, 0xffffff);
  if (!v) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

bool IsBridgeClass(uint32_t c) { return (c >> 8) == 0x0604; }
Result<std::optional<uint8_t>> BusNumberAttr(const PciFunction& fn, std::string_view name) {
  auto it = fn.attrs.find(name);
  if (it == fn.attrs.end() || !it->second) return std::optional<uint8_t>{};
  const std::string& text = *it->second;
  unsigned value = 0;
  const bool digits = !text.empty() && text.size() <= 3 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) value = static_cast<unsigned>(std::stoul(text));
  if (!digits || value > 255)
    return Fail(EINVAL, "{}: {} {} is not a bus number (decimal 0-255)", fn.bdf.ToString(), name,
                Quote(text));
  return std::optional<uint8_t>{static_cast<uint8_t>(value)};
}

bool IsGpuClass(uint32_t c) { return (c >> 16) == 0x03 || (c >> 8) == 0x1200; }
bool IsNvSwitch(uint32_t c, uint32_t vendor) { return (c >> 8) == 0x0680 && vendor == 0x10de; }
bool IsNicClass(uint32_t c) { return (c >> 16) == 0x02; }

std::string PciRootDir(const Snapshot& s, const Bdf& bdf) {
  auto parent = s.pci_root_parents.find(bdf.BusId());
  if (parent == s.pci_root_parents.end()) return "devices/" + bdf.RootName();
  return fmt::format("devices/{}/{}", parent->second, bdf.RootName());
}

std::optional<int> NumaNodeOf(const PciFunction& fn) {
  auto it = fn.attrs.find("numa_node");
  if (it == fn.attrs.end() || !it->second) return std::nullopt;
  std::string_view v = *it->second;
  if (v == "-1") return -1;
  auto n = ParseDecimal("numa_node", v, Limits::kNumaNodes - 1);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

Result<void> Validate(const Snapshot& s) {
  // Lookups (FindPci, ...) binary-search; ParseSnapshot and the reader canonicalize first.
  auto by_bdf = [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; };
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  if (!std::is_sorted(s.pci_functions.begin(), s.pci_functions.end(), by_bdf) ||
      !std::is_sorted(s.rdma_devices.begin(), s.rdma_devices.end(), by_name) ||
      !std::is_sorted(s.netdevs.begin(), s.netdevs.end(), by_name))
    return Fail(EINVAL, "lists are not in canonical order (Canonicalize first)");
  if (s.comment && s.comment->size() > Limits::kAttrBytes)
    return Fail(EINVAL, "comment: longer than {} bytes", Limits::kAttrBytes);
  if (s.verbs_abi_version && *s.verbs_abi_version > 1000)
    return Fail(ERANGE, "verbs_abi_version: {} is absurd", *s.verbs_abi_version);
  if (s.numa) RXP_TRY(ValidateNuma(*s.numa));
  RXP_TRY(ValidatePci(s));
  RXP_TRY(ValidateRootParents(s));
  RXP_TRY(ValidateRdma(s));
  RXP_TRY(ValidateNetdevs(s));
  for (const auto* v : {&s.peer_memory.nvidia_peermem, &s.peer_memory.nv_mem, &s.peer_memory.nv_mem_nc})
    if (*v && (*v)->size() > Limits::kAttrBytes) return Fail(EINVAL, "peer_memory: version too long");
  return Ok();
}

namespace {

Result<Snapshot> ParseSnapshotImpl(std::string_view text) {
  if (text.size() > Limits::kJsonBytes)
    return Fail(E2BIG, "{} bytes exceed the limit of {}", text.size(), Limits::kJsonBytes);
  RXP_TRY(CheckNesting(text));
  Json root;
  // A key given twice in one object is refused (json_duplicate_keys.h says why).
  DuplicateKeyWatch<Json> keys;
  try {
    root = Json::parse(text, keys.Callback());
  } catch (const Json::exception& e) {
    // nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, ...", with
    // the last token read: cut, so a 10 MB token makes no 10 MB line.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    constexpr size_t kMaxReason = 240;
    if (what.size() > kMaxReason) what = what.substr(0, kMaxReason) + "...";
    return Fail(EINVAL, "not valid JSON: {}", what);
  }
  if (keys.duplicate())
    return Fail(EINVAL, "key {} appears twice in one object", Quote(*keys.duplicate()));
  RXP_TRY(CheckKeys(root, "top level",
                    {"schema", "version", "comment", "verbs_abi_version", "pci_functions",
                     "pci_root_parents", "rdma_devices", "netdevs", "numa", "peer_memory"}));
  const Json* schema = Field(root, "schema");
  if (schema == nullptr || !schema->is_string() || schema->get_ref<const std::string&>() != kSchemaName)
    return Fail(EINVAL, "field 'schema' must be \"{}\"", kSchemaName);
  const Json* version = Field(root, "version");
  if (version == nullptr || !version->is_number_integer())
    return Fail(EINVAL, "field 'version' must be an integer");
  if (version->get<int64_t>() != kSchemaVersion)
    return Fail(EPROTONOSUPPORT, "schema version {} is not supported (this build reads {})",
                version->dump(), kSchemaVersion);

  Snapshot s;
  auto comment = GetOptionalString(root, "", "comment", Limits::kAttrBytes);
  if (!comment) return std::move(comment).error();
  s.comment = std::move(*comment);
  if (const Json* abi = Field(root, "verbs_abi_version"); abi != nullptr && !abi->is_null()) {
    auto a = GetUint(*abi, "verbs_abi_version", 1000);
    if (!a) return std::move(a).error();
    s.verbs_abi_version = static_cast<uint32_t>(*a);
  }
  auto pci = GetArray<PciFunction>(root, "", "pci_functions", Limits::kPciFunctions, ParsePci);
  if (!pci) return std::move(pci).error();
  s.pci_functions = std::move(*pci);
  if (const Json* parents = Field(root, "pci_root_parents");
      parents != nullptr && !parents->is_null()) {
    auto p = ParseRootParents(*parents, "pci_root_parents");
    if (!p) return std::move(p).error();
    s.pci_root_parents = std::move(*p);
  }
  auto rdma = GetArray<RdmaDevice>(root, "", "rdma_devices", Limits::kRdmaDevices, ParseRdma);
  if (!rdma) return std::move(rdma).error();
  s.rdma_devices = std::move(*rdma);
  auto net = GetArray<Netdev>(root, "", "netdevs", Limits::kNetdevs, ParseNetdev);
  if (!net) return std::move(net).error();
  s.netdevs = std::move(*net);
  if (const Json* numa = Field(root, "numa"); numa != nullptr && !numa->is_null()) {
    auto n = ParseNuma(*numa, "numa");
    if (!n) return std::move(n).error();
    s.numa = std::move(*n);
  }
  if (const Json* pm = Field(root, "peer_memory"); pm != nullptr && !pm->is_null()) {
    auto p = ParsePeerMemory(*pm, "peer_memory");
    if (!p) return std::move(p).error();
    s.peer_memory = std::move(*p);
  }
  Canonicalize(&s);
  RXP_TRY(Validate(s));
  return s;
}

}  // namespace

Result<Snapshot> ParseSnapshot(std::string_view text) {
  auto s = ParseSnapshotImpl(text);
  if (!s) return Error{s.error().errnum, "snapshot: " + s.error().reason};
  return s;
}

std::string SerializeSnapshot(const Snapshot& s) {
  OrderedJson root;
  root["schema"] = kSchemaName;
  root["version"] = kSchemaVersion;
  if (s.comment) root["comment"] = *s.comment;
  root["verbs_abi_version"] = s.verbs_abi_version ? OrderedJson(*s.verbs_abi_version) : OrderedJson(nullptr);
  OrderedJson pci = OrderedJson::array();
  for (const auto& fn : s.pci_functions) {
    OrderedJson j;
    j["bdf"] = fn.bdf.ToString();
    j["parent"] = fn.parent ? OrderedJson(fn.parent->ToString()) : OrderedJson(nullptr);
    if (fn.physfn) j["physfn"] = fn.physfn->ToString();
    if (fn.driver) j["driver"] = *fn.driver;
    j["attrs"] = AttrsJson(fn.attrs);
    if (fn.config) j["config"] = ConfigHex(*fn.config);
    pci.push_back(std::move(j));
  }
  root["pci_functions"] = std::move(pci);
  if (!s.pci_root_parents.empty()) {
    OrderedJson parents = OrderedJson::object();
    for (const auto& [bus_id, parent] : s.pci_root_parents) parents[bus_id] = parent;
    root["pci_root_parents"] = std::move(parents);
  }
  OrderedJson rdma = OrderedJson::array();
  for (const auto& d : s.rdma_devices) {
    OrderedJson j;
    j["name"] = d.name;
    j["pci"] = d.pci ? OrderedJson(d.pci->ToString()) : OrderedJson(nullptr);
    j["attrs"] = AttrsJson(d.attrs);
    if (d.uverbs) {
      OrderedJson u;
      u["name"] = d.uverbs->name;
      u["dev"] = d.uverbs->dev.ToString();
      u["abi_version"] = d.uverbs->abi_version ? OrderedJson(*d.uverbs->abi_version) : OrderedJson(nullptr);
      if (d.uverbs->host_name) u["host_name"] = *d.uverbs->host_name;
      if (d.uverbs->host_dev) u["host_dev"] = d.uverbs->host_dev->ToString();
      j["uverbs"] = std::move(u);
    }
    OrderedJson ports = OrderedJson::array();
    for (const auto& p : d.ports) {
      OrderedJson pj;
      pj["port"] = p.number;
      pj["attrs"] = AttrsJson(p.attrs);
      pj["gid_table_len"] = p.gid_table_len;
      OrderedJson gids = OrderedJson::array();
      for (const auto& g : p.gids) {
        OrderedJson gj;
        gj["index"] = g.index;
        gj["gid"] = g.gid;
        gj["type"] = g.type;
        gj["ndev"] = g.ndev ? OrderedJson(*g.ndev) : OrderedJson(nullptr);
        gids.push_back(std::move(gj));
      }
      pj["gids"] = std::move(gids);
      pj["pkeys"] = p.pkeys;
      ports.push_back(std::move(pj));
    }
    j["ports"] = std::move(ports);
    rdma.push_back(std::move(j));
  }
  root["rdma_devices"] = std::move(rdma);
  OrderedJson net = OrderedJson::array();
  for (const auto& n : s.netdevs) {
    OrderedJson j;
    j["name"] = n.name;
    j["pci"] = n.pci ? OrderedJson(n.pci->ToString()) : OrderedJson(nullptr);
    j["attrs"] = AttrsJson(n.attrs);
    net.push_back(std::move(j));
  }
  root["netdevs"] = std::move(net);
  if (s.numa) {
    OrderedJson numa;
    numa["attrs"] = AttrsJson(s.numa->attrs);
    OrderedJson nodes = OrderedJson::array();
    for (const auto& n : s.numa->nodes) {
      OrderedJson j;
      j["id"] = n.id;
      j["cpumap"] = n.cpumap;
      j["cpulist"] = n.cpulist;
      j["distance"] = n.distance;
      if (n.mem_total_kb) j["mem_total_kb"] = *n.mem_total_kb;
      if (n.mem_free_kb) j["mem_free_kb"] = *n.mem_free_kb;
      nodes.push_back(std::move(j));
    }
    numa["nodes"] = std::move(nodes);
    root["numa"] = std::move(numa);
  } else {
    root["numa"] = nullptr;
  }
  OrderedJson pm = OrderedJson::object();
  if (s.peer_memory.nvidia_peermem) pm["nvidia_peermem"] = *s.peer_memory.nvidia_peermem;
  if (s.peer_memory.nv_mem) pm["nv_mem"] = *s.peer_memory.nv_mem;
  if (s.peer_memory.nv_mem_nc) pm["nv_mem_nc"] = *s.peer_memory.nv_mem_nc;
  root["peer_memory"] = std::move(pm);
  // Invalid UTF-8 (a hostile node_desc) is replaced rather than thrown about.
  return root.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

}  // namespace rxp::sysfs
