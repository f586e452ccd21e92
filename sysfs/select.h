// Select: narrows a host snapshot to what one sandbox gets.
//
//   - RDMA devices: the named ones (all by default);
//   - netdevs: the named ones, or by default those tied to a kept RDMA device (same PCI
//     function, or named by its GID table), plus, when no devices were named, those tied to
//     no RDMA device at all (a gVNIC, a plain Ethernet NIC);
//   - drop_gidless: an RDMA device none of whose ports has a usable GID is dropped with its
//     NIC-class PCI function and that function's netdevs (usable: populated, and on RoCE
//     its netdev is one the sandbox keeps; gVisor's rdmaUsablePCISlotNames rule). NCCL would
//     otherwise model a NIC it cannot use. A netdev named in `netdevs` stays, with its function;
//   - PCI functions: every GPU and NVSwitch, the functions of what is kept, function 0 and
//     the PF of each kept NIC function (NCCL's NCCL_IB_MERGE_VFS rewrite), and ancestors;
//   - renumber: kept uverbs devices become uverbs0..N-1 in host order, remembering the host
//     device (Uverbs::host_name/host_dev) for the harness. `dev` keeps the host's number
//     (the sandbox's node is the host's, renamed, as with docker --device=HOST:SANDBOX)
//     unless uverbs_dev_base gives the numbers the sandbox's runtime registers instead;
//   - uverbs_names: the embedder names each kept device's uverbs node itself (`rdmaproxy run
//     --devices uverbs0=rxe1` opens the host node behind a sandbox name of its choosing); the
//     host device is remembered as with renumbering, and `dev` is the host node's number,
//     because the sandbox's node is the host's, renamed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "abi/result.h"
#include "sysfs/snapshot_schema.h"

namespace rxp::sysfs {

struct SelectOptions {
  std::optional<std::vector<std::string>> devices;
  std::optional<std::vector<std::string>> netdevs;
  bool drop_gidless = false;
  bool renumber = false;
  std::optional<DevNum> uverbs_dev_base;  // with renumber: device i gets base.minor + i
  // RDMA device name -> its sandbox uverbs name; every kept device with a uverbs node must be
  // named. Excludes renumber.
  std::optional<std::map<std::string, std::string>> uverbs_names;
};

Result<Snapshot> Select(const Snapshot& host, const SelectOptions& options);

}  // namespace rxp::sysfs
