#include "tools/harness/device_map.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace rxp::harness {

Result<std::vector<HostDevice>> DiscoverHostDevices(const std::string& sysfs_root) {
  const std::string class_dir = sysfs_root + "/class/infiniband_verbs";
  std::vector<HostDevice> devices;
  DIR* dir = opendir(class_dir.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return devices;  // no RDMA stack on this host
    return Fail(errno, "cannot list {}: {}", class_dir, std::strerror(errno));
  }
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (proxy::UverbsNumber(name) < 0) continue;
    std::ifstream ibdev(class_dir + "/" + name + "/ibdev");
    std::string line;
    if (!std::getline(ibdev, line)) continue;  // a device going away while we look
    HostDevice device;
    device.uverbs = name;
    device.ibdev = proxy::Trim(line);
    devices.push_back(std::move(device));
  }
  closedir(dir);
  std::sort(devices.begin(), devices.end(), [](const HostDevice& a, const HostDevice& b) {
    return proxy::UverbsNumber(a.uverbs) < proxy::UverbsNumber(b.uverbs);
  });
  return devices;
}

std::vector<HostDevice> WithDriverIds(std::vector<HostDevice> devices,
                                      const std::vector<proxy::HostRdmaDevice>& netlink) {
  for (HostDevice& d : devices)
    for (const proxy::HostRdmaDevice& n : netlink)
      if (n.uverbs == d.uverbs) {
        const std::string ibdev = d.ibdev;
        d = n;
        if (d.ibdev.empty()) d.ibdev = ibdev;
      }
  return devices;
}

}  // namespace rxp::harness
