#include "sysfs/snapshot_reader.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "sysfs/disk_fs.h"
#include "sysfs/materialize.h"
#include "sysfs/synthesize.h"
#include "sysfs/testing/hosts.h"
#include "sysfs/testing/temp_dir.h"
#include "sysfs/vfs.h"

namespace rxp::sysfs {
namespace {

using testing::Bdfs;

namespace fs = std::filesystem;
using testing::TempDir;

struct MiniView {
  MiniView() : vfs(std::make_shared<const Tree>(Synthesize(testing::MiniHost()).value())), view(vfs) {}
  SysfsVfs vfs;
  VfsView view;
};

TEST_CASE("Reading a synthesized tree gives back the snapshot (in memory)") {
  MiniView m;
  auto back = ReadSnapshot(m.view);
  REQUIRE(back.ok());
  Snapshot host = testing::MiniHost();
  host.comment.reset();
  INFO(testing::FirstDifference(SerializeSnapshot(back->snapshot), SerializeSnapshot(host)));
  CHECK(SerializeSnapshot(back->snapshot) == SerializeSnapshot(host));
}

TEST_CASE("Reading a tree whose root complex sits below a VMBus device keeps the parent") {
  Snapshot host = testing::MiniHost();
  host.comment.reset();
  host.pci_root_parents["0000:80"] = "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/00000080-0000-0000-0000-000000000080";
  SysfsVfs vfs(std::make_shared<const Tree>(Synthesize(host).value()));
  VfsView view(vfs);
  auto back = ReadSnapshot(view);
  REQUIRE(back.ok());
  INFO(testing::FirstDifference(SerializeSnapshot(back->snapshot), SerializeSnapshot(host)));
  CHECK(SerializeSnapshot(back->snapshot) == SerializeSnapshot(host));
  // Reading only a device on the other root leaves the parent out with its root.
  ReadOptions opts;
  opts.devices = std::vector<std::string>{"mlx5_0"};
  auto one = ReadSnapshot(view, opts);
  REQUIRE(one.ok());
  CHECK(one->snapshot.pci_root_parents == host.pci_root_parents);  // the GPU on 0000:80 stays
}

TEST_CASE("Selecting devices keeps one NIC with its ancestry, its netdevs and every GPU") {
  MiniView m;
  ReadOptions opts;
  opts.devices = std::vector<std::string>{"mlx5_2"};
  auto r = ReadSnapshot(m.view, opts);
  REQUIRE(r.ok());
  const Snapshot& s = r->snapshot;
  REQUIRE(s.rdma_devices.size() == 1);
  CHECK(s.rdma_devices[0].name == "mlx5_2");
  std::vector<std::string> netdevs;
  for (const auto& n : s.netdevs) netdevs.push_back(n.name);
  CHECK(netdevs == std::vector<std::string>{"ens1f1np1"});
  // mlx5_2 is function 1: function 0 comes along (NCCL merges onto it); GPUs always do.
  CHECK(Bdfs(s) == std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                                            "0000:04:00.0", "0000:80:01.0", "0000:80:02.0",
                                            "0000:81:00.0", "0000:81:00.1", "0000:82:00.0"});
  CHECK_FALSE(s.FindPci(ParseBdf("0000:03:00.0").value()));
}

TEST_CASE("Names the caller asked for must exist") {
  MiniView m;
  ReadOptions opts;
  opts.devices = std::vector<std::string>{"mlx5_9"};
  auto r = ReadSnapshot(m.view, opts);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().errnum == ENOENT);
  CHECK_THAT(r.error().reason, Catch::Contains("no RDMA device 'mlx5_9'") && Catch::Contains("mlx5_0, mlx5_1"));
  ReadOptions nets;
  nets.netdevs = std::vector<std::string>{"eth7"};
  CHECK(ReadSnapshot(m.view, nets).error().reason.find("no netdev 'eth7'") != std::string::npos);
}

TEST_CASE("PCI paths must be plain root-complex chains") {
  auto plain = ParsePciPath("/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  REQUIRE(plain.ok());
  CHECK(plain->root_parent.empty());
  REQUIRE(plain->chain.size() == 2);
  CHECK(plain->chain[1].ToString() == "0000:01:00.0");
  CHECK_THAT(ParsePciPath("/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0").error().reason,
             Catch::Contains("VMD"));
  // A root complex below a PCI function, even with a 16-bit domain, is VMD's layout.
  CHECK_THAT(ParsePciPath("/devices/pci0000:00/0000:00:0e.0/pci1000:e0/1000:e0:06.0").error().reason,
             Catch::Contains("VMD"));
  CHECK_FALSE(ParsePciPath("/devices/virtual/net/lo").ok());
  CHECK_FALSE(ParsePciPath("/devices/pci0000:00").ok());
  CHECK_FALSE(ParsePciPath("/devices/pci0000:00/0000:17:00.0").ok());  // bus 17 is not root bus 00
  // A netvsc netdev's VMBus device is not on PCI.
  CHECK_FALSE(ParsePciPath("/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
                           "000d3a6e-4b3c-000d-3a6e-4b3c000d3a6e").ok());
}

TEST_CASE("Hyper-V vPCI: the root complex below its VMBus device") {
  // hv_pci_probe(): the root bus's domain comes from the instance GUID (e332 here).
  auto p = ParsePciPath("/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
                        "d4730f70-e332-4ad8-8b61-f7a53d8e3f84/pcie332:00/e332:00:00.0");
  REQUIRE(p.ok());
  CHECK(p->root_parent == "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/d4730f70-e332-4ad8-8b61-f7a53d8e3f84");
  REQUIRE(p->chain.size() == 1);
  CHECK(p->chain[0].ToString() == "e332:00:00.0");
  std::string deep = "/devices";
  for (int i = 0; i < 17; ++i) deep += "/d" + std::to_string(i);
  CHECK(ParsePciPath(deep + "/pci0001:00/0001:00:00.0").error().errnum == E2BIG);
}

// JSON strings are UTF-8: an attribute with other bytes cannot round-trip, and says so.
TEST_CASE("An attribute that is not UTF-8 is read with a warning") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  const std::string dir = tmp / "sys/class/infiniband/mlx5_0";
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
  auto put = [&](const std::string& name, const std::string& text) {
    fs::remove(dir + "/" + name);
    std::FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  auto warnings = [&] {
    auto disk = DiskFs::Open(tmp / "sys");
    REQUIRE(disk.ok());
    auto r = ReadSnapshot(*disk);
    REQUIRE(r.ok());
    return r->warnings;
  };
  put("node_desc", "r\xc3\xa9seau \xe2\x82\xac \xf0\x9f\x98\x80\n");  // UTF-8: no warning
  CHECK(warnings().empty());
  for (const char* bad : {"\xff\xfe\n", "a\xc3\n", "\xc0\xaf\n", "\xed\xa0\x80\n"}) {
    put("node_desc", bad);  // not UTF-8, cut short, overlong, a surrogate
    const auto w = warnings();
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains("node_desc': not UTF-8 text"));
  }
}

TEST_CASE("A NUMA node past the supported ids is skipped with a warning") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  const std::string nodes = tmp / "sys/devices/system/node";
  fs::permissions(nodes, fs::perms::owner_all, fs::perm_options::add);
  fs::create_directory(nodes + "/node1024");
  fs::create_directory(nodes + "/nodeX");  // no node: skipped quietly
  auto disk = DiskFs::Open(tmp / "sys");
  REQUIRE(disk.ok());
  auto r = ReadSnapshot(*disk);
  REQUIRE(r.ok());
  REQUIRE(r->warnings.size() == 1);
  CHECK_THAT(r->warnings[0], Catch::Contains("skipped NUMA node 'node1024'"));
  CHECK(r->snapshot.numa->nodes.size() == 2);
}

// A config that is there but cannot serve a header is left out loudly; a missing one quietly.
TEST_CASE("A PCI config or attribute that is there but unreadable is left out with a warning") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  const std::string dir = tmp / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
  auto read = [&] {
    auto disk = DiskFs::Open(tmp / "sys");
    REQUIRE(disk.ok());
    auto r = ReadSnapshot(*disk);
    REQUIRE(r.ok());
    const PciFunction* fn = r->snapshot.FindPci(ParseBdf("0000:01:00.0").value());
    REQUIRE(fn != nullptr);
    return std::pair{r->warnings, fn->config.has_value()};
  };
  REQUIRE(fs::exists(dir + "/config"));
  CHECK(read() == std::pair{std::vector<std::string>{}, true});
  fs::remove(dir + "/config");
  REQUIRE(::mkfifo((dir + "/config").c_str(), 0644) == 0);  // there, not readable as a file
  auto [fifo_warnings, fifo_config] = read();
  CHECK_FALSE(fifo_config);
  REQUIRE(fifo_warnings.size() == 1);
  CHECK_THAT(fifo_warnings[0], Catch::Contains("0000:01:00.0/config: ENXIO"));
  fs::remove(dir + "/config");
  std::ofstream(dir + "/config") << "short";
  auto [short_warnings, short_config] = read();
  CHECK_FALSE(short_config);
  REQUIRE(short_warnings.size() == 1);
  CHECK_THAT(short_warnings[0], Catch::Contains("5 bytes, shorter than the 64"));
  fs::remove(dir + "/config");
  CHECK(read() == std::pair{std::vector<std::string>{}, false});
  // An attribute that is a link out of the tree (resolved inside the root: nothing there) is
  // left out with a warning too; a missing one quietly (above: no warnings).
  fs::remove(dir + "/vendor");
  fs::create_symlink("/dev/zero", dir + "/vendor");
  auto [link_warnings, link_config] = read();
  REQUIRE(link_warnings.size() == 1);
  CHECK_THAT(link_warnings[0], Catch::Contains("0000:01:00.0/vendor: a symlink that leads to nothing"));
}

// A wrong --root must not read as a host with nothing in it.
TEST_CASE("A root that is no sysfs tree is refused, not read as an empty host") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  for (const std::string& root : {std::string(tmp / ""), std::string(tmp / "sys/class")}) {
    auto disk = DiskFs::Open(root);
    REQUIRE(disk.ok());
    auto r = ReadSnapshot(*disk);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().errnum == ENOENT);
    CHECK_THAT(r.error().reason, Catch::Contains("is not a sysfs tree"));
  }
  auto disk = DiskFs::Open(tmp / "sys");
  REQUIRE(disk.ok());
  CHECK(ReadSnapshot(*disk).ok());
}

TEST_CASE("A hostile tree on disk cannot lead the reader outside it") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  // Plant: an absolute link to the host's /etc, a ".." escape, a FIFO attribute.
  fs::create_directory_symlink("/etc", tmp / "sys/class/infiniband/evil");
  fs::create_directory_symlink("../../../../../../../../etc", tmp / "sys/class/net/evil0");
  std::string fifo_dir = tmp / "sys/class/infiniband/mlx5_0";
  fs::permissions(fifo_dir, fs::perms::owner_all, fs::perm_options::add);
  REQUIRE(::mkfifo((fifo_dir + "/board_id2").c_str(), 0644) == 0);
  fs::remove(fifo_dir + "/hw_rev");
  REQUIRE(::mkfifo((fifo_dir + "/hw_rev").c_str(), 0644) == 0);

  auto disk = DiskFs::Open(tmp / "sys");
  REQUIRE(disk.ok());
  // Confined: "/etc" resolves to <root>/etc, which does not exist.
  CHECK(disk->RealPath("/class/infiniband/evil").error().errnum == ENOENT);
  CHECK(disk->RealPath("/class/net/evil0").error().errnum == ENOENT);
  auto r = ReadSnapshot(*disk);
  REQUIRE(r.ok());  // the bad entries are skipped with a warning, not followed
  std::string warnings;
  for (const auto& w : r->warnings) warnings += w + "\n";
  CHECK_THAT(warnings, Catch::Contains("skipped RDMA device evil"));
  CHECK_THAT(warnings, Catch::Contains("hw_rev") && Catch::Contains("not a regular file"));
  CHECK_FALSE(r->snapshot.FindRdma("evil"));
  CHECK(r->snapshot.FindRdma("mlx5_0")->attrs.count("hw_rev") == 0);

  // Asked for by name, the same entry is an error.
  ReadOptions opts;
  opts.devices = std::vector<std::string>{"evil"};
  CHECK_FALSE(ReadSnapshot(*disk, opts).ok());
}

// Replaces the file at `path` (in a materialized, read-only tree) with `bytes`; nullopt removes it.
void Rewrite(const fs::path& path, std::optional<std::string> bytes) {
  fs::permissions(path.parent_path(), fs::perms::owner_all, fs::perm_options::add);
  fs::remove(path);
  if (!bytes) return;
  std::ofstream(path, std::ios::binary) << *bytes;
}

// What older kernels and trimmed captures look like (hwloc's test trees of real machines):
// the reader takes them as a live kernel would have shown them, or keeps what hwloc reads.
TEST_CASE("Older kernels' and trimmed captures' trees are read as the kernel meant them, meminfo keeps MemTotal and MemFree") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  const fs::path node = tmp / "sys/devices/system/node";
  // A NUL after the newline (the node cpumap and has_* files of hwloc's captures).
  Rewrite(node / "has_cpu", std::string("0-1\n\0", 5));
  Rewrite(node / "node0/cpumap", std::string("0f\n\0", 4));
  // No cpulist (kernels before 2.6.27) and no distance (hand-made trees).
  Rewrite(node / "node1/cpulist", std::nullopt);
  Rewrite(node / "node1/distance", std::nullopt);
  // meminfo: MemTotal and MemFree are kept (the rest is live state); a malformed one is
  // skipped.
  Rewrite(node / "node0/meminfo", "Node 0 MemTotal:       32658348 kB\nNode 0 MemFree:        1000 kB\n"
                                  "Node 0 MemUsed:        32657348 kB\nNode 0 Active:         5 kB\n");
  Rewrite(node / "node1/meminfo", "Node 1 MemTotal:       lots\n");
  // Lists edited apart from their masks: the masks are what hwloc, libnuma and NCCL read.
  Rewrite(node / "node0/cpulist", "0-1\n");
  const fs::path nic = tmp / "sys/bus/pci/devices/0000:04:00.0";
  Rewrite(fs::canonical(nic) / "local_cpulist", "5\n");
  // A bridge missing from /sys/bus/pci/devices: its attributes are in its own directory.
  const std::string bridge_dir = fs::canonical(tmp / "sys/bus/pci/devices/0000:02:01.0");
  Rewrite(tmp / "sys/bus/pci/devices/0000:02:01.0", std::nullopt);

  auto disk = DiskFs::Open(tmp / "sys");
  REQUIRE(disk.ok());
  auto r = ReadSnapshot(*disk);
  REQUIRE(r.ok());
  Snapshot want = testing::MiniHost();
  want.comment.reset();
  want.numa->nodes[1].distance = "";
  want.numa->nodes[0].mem_total_kb = 32658348;
  want.numa->nodes[0].mem_free_kb = 1000;
  INFO(testing::FirstDifference(SerializeSnapshot(r->snapshot), SerializeSnapshot(want)));
  CHECK(SerializeSnapshot(r->snapshot) == SerializeSnapshot(want));
  CHECK(fs::exists(bridge_dir + "/class"));
  std::string warnings;
  for (const auto& w : r->warnings) warnings += w + "\n";
  CHECK_THAT(warnings, Catch::Contains("node0/cpulist: the list '0-1' disagrees with the mask '0f'; "
                                       "kept the mask's '0-3'"));
  CHECK_THAT(warnings, Catch::Contains("0000:04:00.0/local_cpulist: the list '5' disagrees"));
  CHECK_THAT(warnings, Catch::Contains("node1/meminfo: no MemTotal in kB"));

  // A node without distance is rendered without one, as it was read.
  TempDir again;
  REQUIRE(Materialize(Synthesize(r->snapshot).value(), again / "sys").ok());
  CHECK(fs::exists(again / "sys/devices/system/node/node0/distance"));
  CHECK_FALSE(fs::exists(again / "sys/devices/system/node/node1/distance"));
  // node_read_meminfo()'s format; MemUsed is the difference, as the kernel prints it. libnuma's
  // numa_node_size64() finds each figure by its name and the digits before " kB".
  std::ifstream meminfo(again / "sys/devices/system/node/node0/meminfo");
  std::string text((std::istreambuf_iterator<char>(meminfo)), std::istreambuf_iterator<char>());
  CHECK(text == "Node 0 MemTotal:       32658348 kB\n"
                "Node 0 MemFree:            1000 kB\n"
                "Node 0 MemUsed:        32657348 kB\n");
  CHECK_FALSE(fs::exists(again / "sys/devices/system/node/node1/meminfo"));
}

}  // namespace
}  // namespace rxp::sysfs
