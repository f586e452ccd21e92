// Synthesize: snapshot -> the /sys tree the kernel would show for it.
//
// Path-identical to the kernel: canonical /sys/devices/pciDDDD:BB/<bridge>/.../<bdf> nesting,
// per-function attributes and a 64-byte `config`, `subsystem`/`driver`/`physfn`/`virtfnN`
// links, pci_bus directories, the /sys/bus/pci and /sys/class/{pci_bus,infiniband,
// infiniband_verbs,net} link farms with kernel-spelled relative targets, NUMA nodes as on
// the host, peer-memory markers only when the host has them, and the passthrough points of
// policy.h. docs/sysfs.md lists every file and the kernel function it mirrors.
#pragma once

#include "abi/result.h"
#include "sysfs/snapshot_schema.h"
#include "sysfs/tree.h"

namespace rxp::sysfs {

// Validates `snapshot` first (a hand-built one may not have been), then builds the tree.
Result<Tree> Synthesize(const Snapshot& snapshot);

// The 64-byte config header synthesized for a function whose snapshot has none: IDs, class
// and revision from its attributes; for a bridge, header type 1 and the bus numbers the
// snapshot implies (secondary = its children's bus, subordinate = the highest bus below it).
std::array<uint8_t, 64> SynthesizeConfig(const Snapshot& snapshot, const PciFunction& fn);

}  // namespace rxp::sysfs
