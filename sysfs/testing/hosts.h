// Snapshots built in code, for unit tests and the benchmark (not part of rxp_sysfs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sysfs/snapshot_schema.h"

namespace rxp::sysfs::testing {

// A small two-socket host that has every feature the synthesizer handles:
//   node 0: root port 0000:00:01.0 -> Broadcom switch 0000:01:00.0 -> downstream ports
//           0000:02:00.0 (ConnectX-7 IB NIC 0000:03:00.0, mlx5_0, netdev ibp3s0) and
//           0000:02:01.0 (H100 GPU 0000:04:00.0)
//   node 1: root port 0000:80:01.0 -> dual-port ConnectX-6 Dx 0000:81:00.0/.1 (RoCE: mlx5_1,
//           mlx5_2; netdevs ens1f0np0, ens1f1np1), a VF 0000:81:00.2 of the first port (netdev
//           ens1f0v0, link down: speed/duplex/carrier read EINVAL), and
//           root port 0000:80:02.0 -> H100 GPU 0000:82:00.0
//   virtual: rxe0 on veth0
//   8 CPUs (0-3 node 0, 4-7 node 1), nvidia-peermem loaded.
Snapshot MiniHost();

// A generated host for scaling measurements: `devices` slots, each a root port -> switch
// upstream -> two downstream ports -> {ConnectX NIC with one IB port (16-entry GID table),
// its uverbs and IPoIB netdev; a GPU}; 16 slots per PCI domain, 2 NUMA nodes.
Snapshot SyntheticHost(size_t devices);

// The BDFs of a snapshot's PCI functions, in order.
std::vector<std::string> Bdfs(const Snapshot& snapshot);

// The first line where two texts differ, with its line number, for test failure messages.
std::string FirstDifference(const std::string& a, const std::string& b);

}  // namespace rxp::sysfs::testing
