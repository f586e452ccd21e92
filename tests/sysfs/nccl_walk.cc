// rxp_nccl_walk SYSFS_DIR [--gpu BDF]... [--ib NAME]... [--net NAME]...
//
// Replays NCCL's sysfs topology discovery (NCCL 2.30, src/os/linux.cc and src/graph/xml.cc)
// against a sysfs tree at SYSFS_DIR, written from NCCL's source and independently of
// rdmaproxy's synthesizer:
//   - ncclOsGetPciPath: realpath("/sys/class/pci_bus/<dddd:bb>/../../<bdf>");
//   - ncclIbGetPciPath: realpath("/sys/class/infiniband/<dev>/device"), then the port and
//     VF merge (last character -> '0', device number -> "00"), which must still exist;
//   - ncclTopoGetSubsystem: basename(realpath(<path>/subsystem)) must be "pci";
//   - ncclTopoGetXmlFromSys: at every level class, vendor, device, subsystem_vendor,
//     subsystem_device, max_link_speed/width (and the parent's), going up two directories
//     at a time (a switch's downstream port is skipped) until the root complex, then
//     numa_node and /sys/devices/system/node/node<N>/cpumap.
// Prints one line per device with what NCCL would build, so the output on a host's tree and
// on the rendered tree can be compared; exits 1 if a step NCCL needs fails.
#include <limits.h>
#include <stdlib.h>

#include <cctype>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string root;  // realpath of SYSFS_DIR: stands for "/sys"

std::string Real(const std::string& sys_path) {  // sys_path starts with "/sys"
  char buf[PATH_MAX];
  std::string host = root + sys_path.substr(4);
  if (::realpath(host.c_str(), buf) == nullptr) return "";
  std::string r = buf;
  if (r.compare(0, root.size(), root) != 0) return "";  // escaped the tree
  return "/sys" + r.substr(root.size());
}

bool Read(const std::string& sys_path, std::string* out) {
  std::ifstream in(root + sys_path.substr(4));
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  return true;
}

std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }
std::string Dir(const std::string& p) { return p.substr(0, p.rfind('/')); }

// checkBDFFormat(): "dddd:bb:dd.f", 12 characters.
bool IsBdf(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::string PciPath(const std::string& bdf) {  // ncclOsGetPciPath
  return Real("/sys/class/pci_bus/" + bdf.substr(0, 7) + "/../../" + bdf);
}

int failures = 0;

void Failed(const std::string& what, const std::string& why) {
  std::printf("%s: FAILED: %s\n", what.c_str(), why.c_str());
  ++failures;
}

// ncclTopoGetXmlFromSys, parent == NULL branch: returns the trace, or "" after a failure.
std::string Walk(const std::string& what, std::string path) {
  std::string trace = path;
  for (int depth = 0; depth < 64; ++depth) {
    std::string v, line = " | " + Base(path);
    for (const char* attr : {"class", "vendor", "device", "subsystem_vendor", "subsystem_device"}) {
      if (!Read(path + "/" + attr, &v)) {
        Failed(what, "cannot read " + path + "/" + attr);
        return "";
      }
      line += " " + v;
    }
    // Link attributes exist only for PCIe functions (pcie_dev_attrs); NCCL falls back to
    // defaults without them, so a missing one is recorded ("-"), not a failure. Comparing the
    // trace with the source root's catches a tree that loses them.
    std::string parent = Dir(path);
    for (const std::string& dir : {path, parent}) {
      if (dir == parent && !IsBdf(Base(parent))) break;
      std::string speed, width;
      line += std::string(dir == parent ? " up:" : " ") + (Read(dir + "/max_link_speed", &speed) ? speed : "-") +
              "/x" + (Read(dir + "/max_link_width", &width) ? width : "-");
    }
    trace += line;
    // Skip the downstream port: the grandparent BDF is the next node, else the CPU.
    std::string grand = IsBdf(Base(parent)) ? Dir(parent) : "";
    if (grand.empty() || !IsBdf(Base(grand))) {
      std::string numa, cpumap;
      if (!Read(path + "/numa_node", &numa)) {
        Failed(what, "cannot read " + path + "/numa_node");
        return "";
      }
      trace += " | cpu numa=" + numa;
      if (numa != "-1") {
        if (!Read("/sys/devices/system/node/node" + numa + "/cpumap", &cpumap) ||
            cpumap.find_first_not_of("0,") == std::string::npos) {
          Failed(what, "node" + numa + "/cpumap is missing or empty");
          return "";
        }
        trace += " cpumap=" + cpumap;
      }
      return trace;
    }
    path = grand;
  }
  Failed(what, "PCI nesting deeper than 64");
  return "";
}

void Gpu(const std::string& bdf) {
  std::string what = "gpu " + bdf, path = PciPath(bdf);
  if (path.empty()) return Failed(what, "Could not find real path of /sys/class/pci_bus/" + bdf.substr(0, 7) + "/../../" + bdf);
  std::string trace = Walk(what, path);
  if (!trace.empty()) std::printf("%s: %s\n", what.c_str(), trace.c_str());
}

void Nic(const std::string& kind, const std::string& name, bool merge) {
  std::string what = kind + " " + name;
  std::string real = Real("/sys/class/" + std::string(kind == "ib" ? "infiniband/" : "net/") + name + "/device");
  if (real.empty()) {
    // Not a failure: NCCL attaches such a NIC to the first CPU (rxe, veth).
    std::printf("%s: not a PCI device\n", what.c_str());
    return;
  }
  std::string path = real;
  if (merge && path.size() > 4) {  // NCCL_IB_MERGE_VFS=1 (the default)
    path[path.size() - 1] = '0';
    path[path.size() - 3] = path[path.size() - 4] = '0';
  }
  if (Base(Real(path + "/subsystem")) != "pci")
    return Failed(what, "network path " + path + " is not a PCI device (subsystem)");
  if (PciPath(Base(path)) != Real(path))
    return Failed(what, "pci_bus lookup of " + Base(path) + " does not give " + path);
  std::string trace = Walk(what, Real(path));
  if (!trace.empty()) std::printf("%s: %s (device %s)\n", what.c_str(), trace.c_str(), Base(real).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rxp_nccl_walk SYSFS_DIR [--gpu BDF]... [--ib NAME]... [--net NAME]...\n");
    return 2;
  }
  char buf[PATH_MAX];
  if (::realpath(argv[1], buf) == nullptr) {
    std::fprintf(stderr, "rxp_nccl_walk: %s: no such directory\n", argv[1]);
    return 2;
  }
  root = buf;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--gpu") Gpu(value);
    else if (flag == "--ib") Nic("ib", value, true);
    else if (flag == "--net") Nic("net", value, false);
    else {
      std::fprintf(stderr, "rxp_nccl_walk: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  return failures == 0 ? 0 : 1;
}
