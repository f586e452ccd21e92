#include "tools/harness/device_view.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sysfs/materialize.h"
#include "sysfs/policy.h"
#include "sysfs/synthesize.h"
#include "tools/harness/path_canon.h"
#include "tools/harness/sysfs_view.h"

namespace rxp::harness {
namespace {

namespace fs = std::filesystem;

Result<void> MakeDirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Fail(ec.value(), "mkdir {}: {}", path, ec.message());
  return Ok();
}

Result<void> MakeSymlink(const std::string& target, const std::string& link) {
  if (symlink(target.c_str(), link.c_str()) != 0)
    return Fail(errno, "symlink {} -> {}: {}", link, target, std::strerror(errno));
  return Ok();
}

// The text of a class link (relative, ../../devices/...) as the host has it; an absolute link
// to the host path when the entry is not a symlink (old kernels had class directories).
std::string ClassLinkText(const std::string& host_entry) {
  std::error_code ec;
  fs::path target = fs::read_symlink(host_entry, ec);
  return ec ? host_entry : target.string();
}

// A class attribute copied into the view with the host's permission bits: sysfs shows
// `abi_version` as 0444 (kernfs mode of a read-only attribute), and `ls -l` or an access(W_OK)
// check in the program should see that, not the umask's 0644.
Result<void> CopyFile(const std::string& from, const std::string& to) {
  struct stat st {};
  std::ifstream in(from);
  if (!in || stat(from.c_str(), &st) != 0) return Ok();  // optional attribute
  std::ostringstream content;
  content << in.rdbuf();
  std::ofstream out(to);
  out << content.str();
  out.close();
  if (!out) return Fail(EIO, "cannot write {}", to);
  if (chmod(to.c_str(), st.st_mode & 07777) != 0)
    return Fail(errno, "chmod {}: {}", to, std::strerror(errno));
  return Ok();
}

}  // namespace

Result<std::unique_ptr<DeviceView>> DeviceView::Create(const std::vector<DeviceMapping>& devices,
                                                       const DeviceViewOptions& options) {
  std::string parent = options.temp_parent;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  // The view's paths are absolute: the rules rewrite to them whatever directory the program
  // has changed to since (a relative TMPDIR would be resolved against that).
  if (parent.front() != '/') {
    std::error_code ec;
    const fs::path absolute = fs::absolute(parent, ec);
    if (ec) return Fail(ec.value(), "cannot create the device view under {}: {}", parent, ec.message());
    parent = absolute.lexically_normal().string();
  }
  std::string templ = parent + "/rdmaproxy-view.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr)
    return Fail(errno, "cannot create the device view under {}: {}", parent, std::strerror(errno));
  // mkdtemp() makes it 0700; the program may drop to another user (a root launcher's setpriv,
  // runuser, a daemon's setuid) and must still read its /sys and find its devices, as it reads
  // the world-readable host ones natively. Only the owner writes, as before.
  if (chmod(templ.c_str(), 0755) != 0) {
    const int err = errno;
    rmdir(templ.c_str());
    return Fail(err, "cannot open the device view {} to the program's users: {}", templ,
                std::strerror(err));
  }
  auto view = std::make_unique<DeviceView>();
  view->root_ = templ;
  const std::string& root = view->root_;
  const std::string sys = options.host_sysfs;
  const std::string dev = options.host_dev;

  // dev/infiniband: one entry per allowed device, under its sandbox name.
  RXP_TRY(MakeDirs(root + "/dev/infiniband"));
  for (const DeviceMapping& m : devices)
    RXP_TRY(MakeSymlink(dev + "/" + m.host.uverbs, root + "/dev/infiniband/" + m.sandbox_uverbs));
  const bool has_rdma_cm = !devices.empty() && access((dev + "/rdma_cm").c_str(), F_OK) == 0;
  if (has_rdma_cm) RXP_TRY(MakeSymlink(dev + "/rdma_cm", root + "/dev/infiniband/rdma_cm"));

  // sys: the synthesized tree, or the class link farms over the host's sys/devices.
  const std::string vclass = root + "/sys/class";
  if (options.sysfs_snapshot) {
    auto selected = SelectSysfsForDevices(*options.sysfs_snapshot, devices, dev);
    if (!selected.ok()) return std::move(selected).error();
    auto tree = sysfs::Synthesize(*selected);
    if (!tree.ok()) return std::move(tree).error();
    auto written = sysfs::Materialize(*tree, root + "/sys");
    if (!written.ok()) return std::move(written).error();
  } else if (!options.sysfs_dir) {
    RXP_TRY(MakeDirs(vclass + "/infiniband"));
    RXP_TRY(MakeDirs(vclass + "/infiniband_verbs"));
    RXP_TRY(MakeDirs(vclass + "/infiniband_mad"));
    RXP_TRY(MakeSymlink(sys + "/devices", root + "/sys/devices"));
    RXP_TRY(CopyFile(sys + "/class/infiniband_verbs/abi_version",
                     vclass + "/infiniband_verbs/abi_version"));
    RXP_TRY(CopyFile(sys + "/class/infiniband_mad/abi_version",
                     vclass + "/infiniband_mad/abi_version"));
    for (const DeviceMapping& m : devices) {
      RXP_TRY(MakeSymlink(ClassLinkText(sys + "/class/infiniband_verbs/" + m.host.uverbs),
                          vclass + "/infiniband_verbs/" + m.sandbox_uverbs));
      const std::string ibdev_link = vclass + "/infiniband/" + m.host.ibdev;
      if (access(ibdev_link.c_str(), F_OK) != 0 && errno == ENOENT)
        RXP_TRY(MakeSymlink(ClassLinkText(sys + "/class/infiniband/" + m.host.ibdev), ibdev_link));
    }
  }

  using Kind = Resolution::Kind;
  using Match = PathRule::Match;
  auto& rules = view->rules_;
  // clang-format off
  // No device at all (none allowed, or a host without RDMA): no /dev/infiniband, as in a
  // container given no RDMA device -- a program that tests for the directory finds none.
  if (!devices.empty())
    rules.push_back({"/dev/infiniband", Match::kExact, Kind::kRewrite, root + "/dev/infiniband", 0, false, "device directory"});
  rules.push_back({"/dev/infiniband", Match::kTree,  Kind::kFail,    "",                         ENOENT, false, "device not allowed"});
  for (const DeviceMapping& m : devices)
    rules.push_back({"/dev/infiniband/" + m.sandbox_uverbs, Match::kExact, Kind::kRewrite,
                     dev + "/" + m.host.uverbs, 0, true, m.sandbox_uverbs});
  if (has_rdma_cm)
    rules.push_back({"/dev/infiniband/rdma_cm", Match::kExact, Kind::kRewrite, dev + "/rdma_cm", 0, true, "rdma_cm"});
  if (options.sysfs_snapshot || options.sysfs_dir) {
    const std::string served = options.sysfs_snapshot ? root + "/sys" : NormalizePath(*options.sysfs_dir);
    rules.push_back({"/sys", Match::kTree, Kind::kRewrite, served, 0, false, options.sysfs_snapshot ? "synthesized sysfs" : "sysfs dir"});
    // The host's own below the passthrough prefixes (sysfs/policy.h): the tree has empty
    // mount points there.
    for (const sysfs::PassthroughRule& pass : sysfs::kPassthroughRules) {
      const std::string host = sys + std::string(pass.path.substr(4));  // below "/sys"
      if (host == pass.path)
        rules.push_back({std::string(pass.path), Match::kTree, Kind::kPassThrough, "", 0, false, "sysfs passthrough"});
      else
        rules.push_back({std::string(pass.path), Match::kTree, Kind::kRewrite, host, 0, false, "sysfs passthrough"});
    }
  } else {
    // A class the host does not have (no RDMA stack loaded) is not there for the program
    // either: an empty directory would say the stack is there with no device.
    for (const char* cls : {"infiniband", "infiniband_verbs", "infiniband_mad"}) {
      const std::string cls_path = std::string("/sys/class/") + cls;
      if (access((sys + "/class/" + cls).c_str(), F_OK) == 0)
        rules.push_back({cls_path, Match::kTree, Kind::kRewrite, vclass + "/" + cls, 0, false, "sysfs view"});
      else
        rules.push_back({cls_path, Match::kTree, Kind::kFail, "", ENOENT, false, "no such class on the host"});
    }
  }
  // clang-format on
  // libibverbs lists its devices in the readdir order of this directory when netlink is
  // refused; natively netlink gives them in host index order. The harness orders the listing
  // (ordered_listing.h) so that "the first device" is the same one as natively.
  if (devices.size() > 1) {
    std::vector<const DeviceMapping*> by_index;
    for (const DeviceMapping& m : devices) by_index.push_back(&m);
    std::stable_sort(by_index.begin(), by_index.end(),
                     [](const DeviceMapping* a, const DeviceMapping* b) {
                       return a->host.index < b->host.index;
                     });
    auto order = std::make_shared<std::vector<std::string>>();
    for (const DeviceMapping* m : by_index) order->push_back(m->sandbox_uverbs);
    const std::string served_class =
        options.sysfs_snapshot ? root + "/sys/class/infiniband_verbs"
        : options.sysfs_dir    ? NormalizePath(*options.sysfs_dir) + "/class/infiniband_verbs"
                               : vclass + "/infiniband_verbs";
    PathRule listing{"/sys/class/infiniband_verbs", Match::kExact, Kind::kRewrite, served_class,
                     0, true, "infiniband_verbs listing"};
    listing.listing_order = std::move(order);
    rules.push_back(std::move(listing));
  }
  return view;
}

DeviceView::~DeviceView() {
  if (root_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

}  // namespace rxp::harness
