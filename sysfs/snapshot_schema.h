// The host snapshot: what of a host's /sys a sandbox needs to see, as versioned JSON.
//
// A snapshot is taken on the host (snapshot_reader.h), filtered for one sandbox (select.h),
// turned into a tree (synthesize.h) and served or materialized. The JSON form is documented
// field by field in docs/sysfs.md; this header is its single source of truth in code.
//
// Loading is strict: wrong types, unknown fields or versions, unsafe names, absurd sizes,
// dangling references and PCI parent cycles are refused with a one-line reason, so that every
// later stage may assume a well-formed snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"
#include "sysfs/names.h"

namespace rxp::sysfs {

inline constexpr std::string_view kSchemaName = "rdmaproxy-sysfs-snapshot";
inline constexpr int kSchemaVersion = 1;

// An attribute file's content without its final newline; nullopt when the kernel fails the
// read with EINVAL (a down link's netdev `speed`, an unpopulated GID's `gid_attrs/types/N`).
// JSON: a string, or null.
using AttrValue = std::optional<std::string>;
using Attrs = std::map<std::string, AttrValue, std::less<>>;

// One PCI function and its place in the hierarchy: /sys/devices/pciDDDD:BB/<parents...>/<bdf>
// (the root complex directory may itself sit lower: Snapshot::pci_root_parents).
struct PciFunction {
  Bdf bdf;
  std::optional<Bdf> parent;  // the bridge it sits under; none: directly on a root bus
  Attrs attrs;                // PciAttrNames(); `class` is required
  // The first 64 bytes of `config` (what an unprivileged read returns): hwloc takes bridge
  // bus ranges and the header type from it. Synthesized from the attributes when absent.
  std::optional<std::array<uint8_t, 64>> config;
  std::optional<std::string> driver;  // basename of the `driver` link ("mlx5_core")
  std::optional<Bdf> physfn;          // for an SR-IOV VF: its PF (`physfn` link)
};

// A populated GID table entry. Unpopulated entries (index < gid_table_len, not listed) read
// as the zero GID, and their gid_attrs/{types,ndevs} fail with EINVAL, as in the kernel.
struct Gid {
  uint32_t index = 0;
  std::string gid;                  // "fe80:0000:0000:0000:b83f:d203:00a1:b2c4"
  std::string type;                 // gid_attrs/types: "IB/RoCE v1" or "RoCE v2"
  std::optional<std::string> ndev;  // gid_attrs/ndevs; none (EINVAL) on IB ports
};

struct Port {
  uint32_t number = 1;
  Attrs attrs;  // PortAttrNames()
  uint32_t gid_table_len = 0;
  std::vector<Gid> gids;            // sorted by index
  std::vector<std::string> pkeys;   // pkeys/0..N-1 in order ("0xffff")
};

// The uverbs character device of an RDMA device (/sys/class/infiniband_verbs/uverbsN).
struct Uverbs {
  std::string name;  // as the sandbox sees it: "uverbs0"
  DevNum dev;        // `dev`: must equal st_rdev of the sandbox's /dev/infiniband/<name>
  std::optional<uint32_t> abi_version;
  // Set by renumbering (select.h): the host device behind `name`, for the harness to open.
  std::optional<std::string> host_name;
  std::optional<DevNum> host_dev;
};

struct RdmaDevice {
  std::string name;          // "mlx5_0"
  std::optional<Bdf> pci;    // none: a virtual device (rxe, siw) under /sys/devices/virtual
  Attrs attrs;               // IbAttrNames()
  std::vector<Port> ports;   // sorted by number
  std::optional<Uverbs> uverbs;
};

struct Netdev {
  std::string name;
  std::optional<Bdf> pci;  // none: /sys/devices/virtual/net/<name> (bond, veth, vlan)
  Attrs attrs;             // NetAttrNames()
};

struct NumaNode {
  uint32_t id = 0;
  std::string cpumap;    // "%*pb" mask, as NCCL's ncclStrToCpuset parses it
  std::string cpulist;
  std::string distance;  // "10 21"
  // MemTotal of nodeN/meminfo (node_read_meminfo()): hwloc's NUMA node size, libnuma's
  // numa_node_size64(). Absent: not captured.
  std::optional<uint64_t> mem_total_kb;
  // MemFree at capture time (live state, like the GID tables): libnuma's numa_node_size64()
  // with a free-memory out-parameter warns "Cannot parse sysfs meminfo" without it. Only with
  // mem_total_kb, and at most that.
  std::optional<uint64_t> mem_free_kb;
};

struct Numa {
  Attrs attrs;  // NumaAttrNames(): online, possible, has_cpu, ...
  std::vector<NumaNode> nodes;  // sorted by id
};

// nvidia-peermem markers, present only when the host has them (NCCL gdr.cc checks them with
// access(F_OK) to decide on legacy GPUDirect RDMA). Values are the `version` files' content.
struct PeerMemory {
  std::optional<std::string> nvidia_peermem;  // /sys/module/nvidia_peermem/version
  std::optional<std::string> nv_mem;          // /sys/kernel/mm/memory_peers/nv_mem/version
  std::optional<std::string> nv_mem_nc;       // /sys/kernel/mm/memory_peers/nv_mem_nc/version
  bool operator==(const PeerMemory&) const = default;
};

struct Snapshot {
  std::optional<std::string> comment;        // free text (fixture provenance); not rendered
  std::optional<uint32_t> verbs_abi_version; // /sys/class/infiniband_verbs/abi_version
  std::vector<PciFunction> pci_functions;    // sorted by BDF
  // Root complexes the kernel put below a non-PCI device instead of directly in /sys/devices,
  // keyed by root bus id ("e332:00"); the value is that device's directory below
  // /sys/devices. Hyper-V's vPCI (Azure): hv_pci_probe() creates one root bus per VMBus device,
  // its domain taken from the instance GUID, so the root complex is
  // /sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/<GUID>/pciDDDD:00. Roots not
  // listed live at /sys/devices/pciDDDD:BB (pci_create_root_bus() with no parent device).
  std::map<std::string, std::string, std::less<>> pci_root_parents;
  std::vector<RdmaDevice> rdma_devices;      // sorted by name
  std::vector<Netdev> netdevs;               // sorted by name
  std::optional<Numa> numa;                  // none: no /sys/devices/system/node on the host
  PeerMemory peer_memory;

  const PciFunction* FindPci(const Bdf& bdf) const;
  const RdmaDevice* FindRdma(std::string_view name) const;
  const Netdev* FindNetdev(std::string_view name) const;
};

// The attribute files each kind of object may carry (and the reader collects).
std::span<const std::string_view> PciAttrNames();
std::span<const std::string_view> IbAttrNames();
std::span<const std::string_view> PortAttrNames();
std::span<const std::string_view> NetAttrNames();
std::span<const std::string_view> NumaAttrNames();

// Upper bounds that make a snapshot "absurd"; generous for real hosts, small enough that a
// hostile snapshot cannot make the synthesizer allocate without limit.
struct Limits {
  static constexpr size_t kJsonBytes = 64u << 20;
  static constexpr int kJsonDepth = 16;
  static constexpr size_t kPciFunctions = 1u << 17;
  static constexpr size_t kRdmaDevices = 1u << 14;
  static constexpr size_t kNetdevs = 1u << 16;
  static constexpr size_t kPortsPerDevice = 256;
  static constexpr uint32_t kGidTableLen = 1u << 16;
  // Sum of gid_table_len over all ports: each entry is three files (gids/N and its two
  // gid_attrs), so this bounds what a small snapshot makes render write (3 Mi files, about a
  // minute). Real hosts stay far below: 8 dual-port NICs with 127 VFs each at 255 RoCE GIDs
  // is about 0.5 Mi.
  static constexpr size_t kGidEntriesTotal = 1u << 20;
  static constexpr size_t kPkeysPerPort = 1u << 16;
  static constexpr size_t kPkeysTotal = 1u << 22;
  static constexpr size_t kNumaNodes = 1024;  // MAX_NUMNODES
  static constexpr size_t kAttrBytes = 4096;  // PAGE_SIZE: a sysfs attribute's maximum
  static constexpr size_t kPciDepth = 32;     // bridges between a root bus and a function
  static constexpr uint64_t kNodeMemKb = 1ull << 42;  // 4 PiB per NUMA node
  static constexpr size_t kRootParentDepth = 16;      // components of a pci_root_parents path
  static constexpr size_t kRootParentBytes = 1024;    // its length (Hyper-V's are ~85 bytes)
};

// Sorts every list into the canonical order the Snapshot comments promise.
void Canonicalize(Snapshot* snapshot);

// Checks everything a later stage relies on (see the header comment).
Result<void> Validate(const Snapshot& snapshot);

// JSON text -> validated snapshot. Never throws, whatever the input.
Result<Snapshot> ParseSnapshot(std::string_view json_text);
// Snapshot -> JSON text (stable field order, 2-space indent, trailing newline).
std::string SerializeSnapshot(const Snapshot& snapshot);

// Helpers shared by the stages that interpret attributes.
std::optional<uint32_t> PciClass(const PciFunction& fn);  // `class` >> 0 (24 bits)
// A bridge's `secondary_bus_number` / `subordinate_bus_number` attribute: decimal 0-255, as
// pci-sysfs.c prints it ("%u"). nullopt when absent or null; an error when malformed.
Result<std::optional<uint8_t>> BusNumberAttr(const PciFunction& fn, std::string_view name);
bool IsBridgeClass(uint32_t pci_class);                    // 0x0604xx PCI-to-PCI bridge
// A GPU or compute accelerator, which GPU software pairs with NICs: any display controller
// (0x03xxxx: VGA, 3D, and "other", as AMD's MI200 series and Intel's data center GPUs report)
// or processing accelerator (0x1200xx: AMD MI300, Habana Gaudi).
bool IsGpuClass(uint32_t pci_class);
// An NVSwitch: class 0x0680xx ("other bridge") from NVIDIA. The class alone also matches
// chipset functions (PIIX4 ACPI, PMCs), which a sandbox has no use for.
bool IsNvSwitch(uint32_t pci_class, uint32_t vendor);
bool IsNicClass(uint32_t pci_class);                       // 0x02xxxx network
std::optional<int> NumaNodeOf(const PciFunction& fn);      // `numa_node`, -1 when unknown
// The root complex directory owning the root bus of `bdf` (a function directly on a root
// bus), relative to /sys: "devices/pci0000:17", or "devices/<parent>/pcie332:00" when
// pci_root_parents lists the bus.
std::string PciRootDir(const Snapshot& s, const Bdf& bdf);

}  // namespace rxp::sysfs
