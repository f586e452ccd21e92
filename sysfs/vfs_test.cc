#include "sysfs/vfs.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <memory>

#include "sysfs/policy.h"

namespace rxp::sysfs {
namespace {

// A hand-built tree, so each resolution rule is tested on its own.
SysfsVfs SmallVfs() {
  Tree t;
  NodeId dev = t.MkdirAll("devices/pci0000:00/0000:00:01.0").value();
  REQUIRE(t.AddFile(dev, "class", "0x060400\n").ok());
  REQUIRE(t.AddUnreadable(dev, "broken").ok());
  NodeId cls = t.MkdirAll("class/x").value();
  REQUIRE(t.Link(cls, "dev", dev).ok());
  REQUIRE(t.AddSymlink(cls, "loop", "loop").ok());
  REQUIRE(t.AddSymlink(cls, "a", "b").ok());
  REQUIRE(t.AddSymlink(cls, "b", "a").ok());
  REQUIRE(t.AddSymlink(cls, "up", "../..").ok());
  REQUIRE(t.AddSymlink(cls, "dangling", "nothing").ok());
  REQUIRE(t.AddSymlink(cls, "file", "../../devices/pci0000:00/0000:00:01.0/class").ok());
  NodeId sys = t.MkdirAll("devices/system").value();
  REQUIRE(t.AddPassthrough(sys, "cpu").ok());
  REQUIRE(t.AddSymlink(cls, "cpus", "../../devices/system/cpu").ok());
  return SysfsVfs(std::make_shared<const Tree>(std::move(t)));
}

TEST_CASE("Paths resolve with the kernel's rules") {
  SysfsVfs vfs = SmallVfs();
  CHECK(vfs.ReadAll("/sys/class/x/dev/class").value() == "0x060400\n");
  CHECK(vfs.ReadAll("/sys//class/./x/dev/../0000:00:01.0/class").value() == "0x060400\n");
  CHECK(vfs.RealPath("/sys/class/x/dev").value() == "/sys/devices/pci0000:00/0000:00:01.0");
  CHECK(vfs.RealPath("/sys/class/x/up").value() == "/sys");
  CHECK(vfs.RealPath("/sys/..").value() == "/sys");  // ".." at the mount point stays there
  CHECK(vfs.RealPath("/sys").value() == "/sys");
  CHECK(vfs.RealPath("/sys/").value() == "/sys");
  CHECK(vfs.Stat("/sys/class/x/dev").value().kind == NodeKind::kDir);
  CHECK(vfs.Lstat("/sys/class/x/dev").value().kind == NodeKind::kSymlink);
  CHECK((vfs.Lstat("/sys/class/x/dev").value().mode & S_IFMT) == S_IFLNK);
  CHECK((vfs.Stat("/sys/class/x/dev/class").value().mode & 0777) == 0444);
  CHECK(vfs.Stat("/sys/class/x/dev/class").value().size == 4096);
  CHECK(vfs.Stat("/sys/class/x/dev").value().ino == vfs.Stat("/sys/devices/pci0000:00/0000:00:01.0").value().ino);
}

TEST_CASE("Errors are the kernel's") {
  SysfsVfs vfs = SmallVfs();
  auto err = [&](auto r) { return r.ok() ? 0 : r.error().errnum; };
  CHECK(err(vfs.Stat("/sys/nope")) == ENOENT);
  CHECK(err(vfs.Stat("/sys/class/x/dangling")) == ENOENT);
  CHECK(err(vfs.Lstat("/sys/class/x/dangling")) == 0);
  CHECK(err(vfs.Stat("/sys/class/x/dev/class/more")) == ENOTDIR);
  CHECK(err(vfs.Stat("/sys/class/x/dev/class/")) == ENOTDIR);
  CHECK(err(vfs.Stat("/sys/class/x/file/")) == ENOTDIR);   // trailing slash follows, then demands a dir
  CHECK(err(vfs.Lstat("/sys/class/x/dev/")) == 0);          // ...and follows a link to a dir
  CHECK(vfs.Lstat("/sys/class/x/dev/").value().kind == NodeKind::kDir);
  CHECK(err(vfs.ReadAll("/sys/class/x/dev")) == EISDIR);
  CHECK(err(vfs.ReadDir("/sys/class/x/file")) == ENOTDIR);
  CHECK(err(vfs.ReadLink("/sys/class/x/dev/class")) == EINVAL);
  CHECK(err(vfs.ReadAll("/sys/devices/pci0000:00/0000:00:01.0/broken")) == EINVAL);
  CHECK(err(vfs.Stat("/sys/devices/pci0000:00/0000:00:01.0/broken")) == 0);
  CHECK(err(vfs.Stat("/sys/class/x/loop")) == ELOOP);
  CHECK(err(vfs.Stat("/sys/class/x/a")) == ELOOP);
  CHECK(err(vfs.Lstat("/sys/class/x/loop")) == 0);
  CHECK(err(vfs.Stat("/sys/" + std::string(256, 'a'))) == ENAMETOOLONG);
  CHECK(err(vfs.Stat("/sys/" + std::string(5000, 'a'))) == ENAMETOOLONG);
  CHECK(err(vfs.Stat("/proc/self")) == EINVAL);
  CHECK(err(vfs.Stat("/system")) == EINVAL);
}

TEST_CASE("Reads are positional like pread") {
  SysfsVfs vfs = SmallVfs();
  char buf[4];
  CHECK(vfs.Read("/sys/class/x/file", 0, buf).value() == 4);
  CHECK(std::string(buf, 4) == "0x06");
  CHECK(vfs.Read("/sys/class/x/file", 6, buf).value() == 3);
  CHECK(std::string(buf, 3) == "00\n");
  CHECK(vfs.Read("/sys/class/x/file", 9, buf).value() == 0);
  CHECK(vfs.Read("/sys/class/x/file", 1000, buf).value() == 0);
}

TEST_CASE("Directory listings keep creation order") {
  SysfsVfs vfs = SmallVfs();
  auto entries = vfs.ReadDir("/sys/class/x").value();
  std::vector<std::string> names;
  for (const auto& e : entries) names.emplace_back(e.name);
  CHECK(names == std::vector<std::string>{"dev", "loop", "a", "b", "up", "dangling", "file", "cpus"});
  CHECK(entries[0].kind == NodeKind::kSymlink);
}

TEST_CASE("Passthrough points hand the rest of the path to the embedder") {
  SysfsVfs vfs = SmallVfs();
  auto r = vfs.Resolve("/sys/class/x/cpus/cpu3/topology/../online");
  REQUIRE(r.ok());
  CHECK(r->passthrough);
  CHECK(r->host_dir == "/sys/devices/system/cpu");
  CHECK(r->rest == "cpu3/topology/../online");  // unresolved: host links decide what ".." means
  auto point = vfs.Resolve("/sys/devices/system/cpu");
  REQUIRE(point.ok());
  CHECK(point->passthrough);
  CHECK(point->rest.empty());
  CHECK(vfs.ReadDir("/sys/devices/system/cpu").error().errnum == EXDEV);
  CHECK(vfs.Lstat("/sys/devices/system").ok());
  // The listing of the parent shows the passthrough point as a directory.
  auto st = vfs.Stat("/sys/devices/system/cpu");
  CHECK(st.error().errnum == EXDEV);
}

TEST_CASE("The policy classifies /sys paths") {
  CHECK(ClassifyPath("/sys/devices/system/cpu") == PathClass::kPassthrough);
  CHECK(ClassifyPath("/sys/devices/system/cpu/cpu0/online") == PathClass::kPassthrough);
  CHECK(ClassifyPath("/sys/devices/system/cpufreq") == PathClass::kSynthesized);
  CHECK(ClassifyPath("/sys/devices/system/node/node0") == PathClass::kSynthesized);
  CHECK(ClassifyPath("/sys/class/dmi/id/product_uuid") == PathClass::kSynthesized);
  CHECK(ClassifyPath("/sys/fs/cgroup/memory.max") == PathClass::kPassthrough);
  CHECK(ClassifyPath("/sys") == PathClass::kSynthesized);
  CHECK(ClassifyPath("/system") == PathClass::kNotSysfs);
  CHECK(ClassifyPath("/proc/cpuinfo") == PathClass::kNotSysfs);
}

}  // namespace
}  // namespace rxp::sysfs
