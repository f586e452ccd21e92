// Snapshot reader: a sysfs mount (the host's /sys, a fixture, a rendered tree) -> Snapshot.
//
// What is collected (docs/sysfs.md has the full list):
//   - the RDMA devices (all, or --devices), their attributes, ports, GID tables and pkeys,
//     and their uverbs character devices;
//   - netdevs: --netdevs, or by default the netdevs of the selected RDMA devices' PCI
//     functions and of their GID tables, plus (when no --devices was given) every other
//     PCI-backed netdev, so a host without RDMA (GKE gVNIC) still shows its NICs;
//   - every GPU (class 0x0300/0x0302) and NVSwitch (0x0680 from NVIDIA);
//   - for all of those, the full PCI ancestry up to the root complex, plus function 0 of each
//     NIC (NCCL merges ports and VFs onto it) and the PF of each VF;
//   - NUMA nodes, the verbs ABI version and nvidia-peermem markers.
// The reader touches only those paths; it never copies the rest of /sys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "abi/result.h"
#include "sysfs/fs_view.h"
#include "sysfs/snapshot_schema.h"

namespace rxp::sysfs {

struct ReadOptions {
  std::optional<std::vector<std::string>> devices;  // RDMA devices; none: all
  std::optional<std::vector<std::string>> netdevs;  // netdevs; none: the default rule above
};

struct ReadResult {
  Snapshot snapshot;
  // Things skipped on the way (an unreadable attribute, a netdev that is not on PCI): one line
  // each, for the CLI to print. Anything the caller asked for by name is an error instead.
  std::vector<std::string> warnings;
};

Result<ReadResult> ReadSnapshot(const FsView& sys, const ReadOptions& options = {});

// Where a PCI function's directory is: the root complex's parent below /devices ("" when it is
// /devices itself; "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/<GUID>" on Hyper-V) and the
// functions from the root bus down.
struct PciPath {
  std::string root_parent;
  std::vector<Bdf> chain;
};
// "/devices/pci0000:00/0000:00:01.0/0000:01:00.0" -> {"", {0000:00:01.0, 0000:01:00.0}}.
// Refuses paths with anything but BDFs below the root complex, and root complexes below a PCI
// function (VMD).
Result<PciPath> ParsePciPath(std::string_view real_path);

}  // namespace rxp::sysfs
