#include "tools/harness/sysfs_view.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "sysfs/disk_fs.h"
#include "sysfs/select.h"

namespace rxp::harness {

Result<sysfs::Snapshot> SelectSysfsForDevices(const sysfs::Snapshot& host,
                                              const std::vector<DeviceMapping>& devices,
                                              const std::string& host_dev) {
  sysfs::SelectOptions select;
  select.devices.emplace();
  select.uverbs_names.emplace();
  for (const DeviceMapping& m : devices) {
    const sysfs::RdmaDevice* dev = host.FindRdma(m.host.ibdev);
    if (dev == nullptr) {
      std::string have;
      for (const auto& d : host.rdma_devices) have += (have.empty() ? "" : ", ") + d.name;
      return Fail(ENOENT, "the snapshot has no RDMA device {} ({}); it has: {}", m.host.ibdev,
                  m.host.uverbs, have.empty() ? "none" : have);
    }
    if (!dev->uverbs)
      return Fail(ENODEV, "the snapshot has no uverbs node for {} (the host's is {})", m.host.ibdev,
                  m.host.uverbs);
    // The node the harness opens for this device, and what the snapshot says it is (the host's
    // side of a snapshot that was renumbered before).
    const std::string node = host_dev + "/" + m.host.uverbs;
    struct stat st {};
    if (::stat(node.c_str(), &st) != 0)
      return Fail(errno, "cannot stat {} (the node of {}): {}", node, m.host.ibdev, std::strerror(errno));
    if (!S_ISCHR(st.st_mode)) return Fail(ENODEV, "{} is not a character device", node);
    const sysfs::DevNum real{major(st.st_rdev), minor(st.st_rdev)};
    const std::string& snap_name = dev->uverbs->host_name.value_or(dev->uverbs->name);
    const sysfs::DevNum snap_dev = dev->uverbs->host_dev.value_or(dev->uverbs->dev);
    if (snap_name != m.host.uverbs || snap_dev != real)
      return Fail(ESTALE,
                  "the snapshot's {} is {} ({}), but on this host it is {} ({}): take the snapshot "
                  "on this host, after its devices are set up",
                  m.host.ibdev, snap_name, snap_dev.ToString(), m.host.uverbs, real.ToString());
    select.devices->push_back(m.host.ibdev);
    (*select.uverbs_names)[m.host.ibdev] = m.sandbox_uverbs;
  }
  return sysfs::Select(host, select);
}

Result<sysfs::ReadResult> SnapshotHostSysfs(const std::string& host_sysfs,
                                            const std::vector<DeviceMapping>& devices) {
  auto root = sysfs::DiskFs::Open(host_sysfs);
  if (!root.ok()) return std::move(root).error();
  sysfs::ReadOptions read;
  read.devices.emplace();
  for (const DeviceMapping& m : devices) read.devices->push_back(m.host.ibdev);
  return sysfs::ReadSnapshot(*root, read);
}

}  // namespace rxp::harness
