// The GPU/NIC connection matrix of a snapshot, as `nvidia-smi topo -m` prints it.
//
// Classes (nvidia-smi's legend), computed from the PCI nesting alone:
//   PIX  at most one PCIe switch between the two (or the same bridge above both)
//   PXB  several switches, without crossing a host bridge
//   PHB  through the host bridge (same root complex)
//   NODE between host bridges of one NUMA node
//   SYS  across NUMA nodes (or where the node is unknown)
// A switch counts once, as NCCL's topology does (ncclTopoGetXmlFromSys skips the downstream
// port and keeps the upstream one), so GPU and NIC on two ports of one switch are PIX.
// NVLink is not visible in sysfs: GPU-GPU cells describe the PCIe path only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sysfs/snapshot_schema.h"

namespace rxp::sysfs {

enum class PathType { kSelf, kPix, kPxb, kPhb, kNode, kSys, kNone };
std::string_view PathTypeName(PathType t);  // "X", "PIX", ..., "N/A"

// The PCIe path class between two functions of `snapshot`.
PathType PciPathType(const Snapshot& snapshot, const Bdf& a, const Bdf& b);

struct TopoEndpoint {
  std::string label;       // "GPU0", "NIC3"
  std::string name;        // "0000:1b:00.0" for a GPU, "mlx5_0" / "eth1" for a NIC
  std::optional<Bdf> pci;  // none: a virtual NIC (rxe)
  std::string cpus;        // local_cpulist, "N/A" when unknown
  std::string numa;        // numa_node, "N/A" when unknown
};

// The most endpoints a matrix is built for: its cells grow with the square of them (4,096
// GPUs would be 16 million cells, 150 MB of text), and nvidia-smi's matrix serves a node's
// handful. Past this the endpoints are listed with their affinity, without cells.
inline constexpr size_t kMaxMatrixEndpoints = 256;

struct TopoMatrix {
  std::vector<TopoEndpoint> endpoints;      // GPUs (PCI order), then NICs (natural name order)
  std::vector<std::vector<PathType>> cells;  // cells[row][col]; empty past kMaxMatrixEndpoints
};

// GPUs are the snapshot's compute GPUs and accelerators (not a BMC's VGA: topo_matrix.cc);
// NICs its RDMA devices plus netdevs on PCI functions no RDMA device uses (a gVNIC).
TopoMatrix BuildTopoMatrix(const Snapshot& snapshot);
std::string FormatTopoMatrix(const TopoMatrix& matrix);

}  // namespace rxp::sysfs
