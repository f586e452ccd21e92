// OrderedListing: the harness's handler for a served directory whose *listing order* a program
// depends on -- /sys/class/infiniband_verbs, from which libibverbs builds its device list when
// NETLINK_RDMA is refused (rdma-core find_sysfs_devs(): the list is in readdir order).
//
// Natively libibverbs asks netlink (find_sysfs_devs_nl()), and RDMA_NLDEV_CMD_GET dumps the
// devices in ib_device index order, so ibv_get_device_list() -- and every program that takes
// "the first device", perftest and the pingpongs without -d, NCCL's device numbering -- sees
// them in that order. Under the harness the same list comes from the rendered directory, whose
// readdir order is whatever the temporary filesystem gives (ext4: name hash; tmpfs: creation
// order, or its reverse before Linux 6.6). The open of that directory is therefore proxied:
// its fd moves into the reserved range, getdents64/getdents on it stop, and at their exit the
// entries the kernel returned are put in the order the harness was given (the devices by host
// index). Only the device entries move, each into a slot another device entry had; everything
// else ("." , "..", abi_version) and every d_off stays where the kernel put it.
//
// Limits (docs/harness.md): the order holds within one getdents batch (glibc's readdir reads
// 32 KiB, hundreds of entries); telldir/seekdir positions are the kernel's, so seeking back
// into a reordered batch lists it in the kernel's order.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tools/harness/handler.h"

namespace rxp::harness {

enum class DirentFormat {
  kDirent64,  // struct linux_dirent64 (getdents64): ino, off, reclen, type, name
  kDirent,    // struct linux_dirent (getdents): ino, off, reclen, name, ..., type in the last byte
};

// `batch` (what one getdents call returned) with the entries named in `order` rearranged into
// that order over the slots they occupy, or nullopt when nothing moves or the batch does not
// parse (a record too short, too long or misaligned: left as the kernel wrote it).
std::optional<std::vector<std::byte>> ReorderDirents(std::span<const std::byte> batch,
                                                     DirentFormat format,
                                                     std::span<const std::string> order);

class OrderedListingHandler final : public ProxiedFileHandler {
 public:
  // `order`: the names in the order the program must see them (shared by every open).
  explicit OrderedListingHandler(std::shared_ptr<const std::vector<std::string>> order)
      : order_(std::move(order)) {}

  EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override;
  ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess& tracee) override;
  void OnClose(CloseReason) override {}

 private:
  std::shared_ptr<const std::vector<std::string>> order_;
};

}  // namespace rxp::harness
