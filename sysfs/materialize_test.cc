#include "sysfs/materialize.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sysfs/disk_fs.h"
#include "sysfs/snapshot_reader.h"
#include "sysfs/synthesize.h"
#include "sysfs/testing/hosts.h"
#include "sysfs/testing/temp_dir.h"

namespace rxp::sysfs {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("A materialized tree reads back as the snapshot it came from") {
  TempDir tmp;
  Snapshot host = testing::MiniHost();
  Tree tree = Synthesize(host).value();
  auto stats = Materialize(tree, tmp / "sys");
  REQUIRE(stats.ok());
  CHECK(stats->dirs + stats->files + stats->links + 1 == tree.size());

  auto disk = DiskFs::Open(tmp / "sys");
  REQUIRE(disk.ok());
  auto back = ReadSnapshot(*disk);
  REQUIRE(back.ok());
  CHECK(back->warnings.empty());
  host.comment.reset();
  INFO(testing::FirstDifference(SerializeSnapshot(back->snapshot), SerializeSnapshot(host)));
  CHECK(SerializeSnapshot(back->snapshot) == SerializeSnapshot(host));
}

TEST_CASE("The kernel's own realpath() agrees with the VFS on a materialized tree") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  char buf[PATH_MAX];
  std::string probe = tmp / "sys/class/pci_bus/0000:03/../../0000:03:00.0";
  REQUIRE(::realpath(probe.c_str(), buf) != nullptr);
  CHECK(std::string(buf) ==
        fs::canonical(tmp.path()).string() + "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  CHECK(fs::read_symlink(tmp / "sys/class/infiniband/mlx5_0/device") == "../../../0000:03:00.0");
  CHECK(Slurp(tmp / "sys/class/infiniband/mlx5_0/device/numa_node") == "0\n");
  // EINVAL attributes become empty files; passthrough points empty directories.
  CHECK(fs::file_size(tmp / "sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/100") == 0);
  CHECK(fs::is_directory(tmp / "sys/devices/system/cpu"));
  CHECK(fs::is_empty(tmp / "sys/devices/system/cpu"));
  CHECK(fs::file_size(tmp / "sys/bus/pci/devices/0000:03:00.0/config") == 64);
  struct stat st {};
  REQUIRE(::stat((tmp / "sys/class/infiniband/mlx5_0/node_guid").c_str(), &st) == 0);
  CHECK((st.st_mode & 0222) == 0);  // read-only like the attributes it stands for
}

TEST_CASE("Repeated contents are hard links to one file, distinct ones are not") {
  TempDir tmp;
  REQUIRE(Materialize(Synthesize(testing::MiniHost()).value(), tmp / "sys").ok());
  struct stat a {}, b {}, c {};
  const std::string port = tmp / "sys/class/infiniband/mlx5_1/ports/1/";
  REQUIRE(::stat((port + "gids/100").c_str(), &a) == 0);
  REQUIRE(::stat((port + "gids/200").c_str(), &b) == 0);
  REQUIRE(::stat((port + "gids/3").c_str(), &c) == 0);
  CHECK(a.st_ino == b.st_ino);
  CHECK(a.st_nlink > 2);
  CHECK(a.st_ino != c.st_ino);
  CHECK(Slurp(port + "gids/200") == "0000:0000:0000:0000:0000:0000:0000:0000\n");
  CHECK(Slurp(port + "gids/3") == "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
}

TEST_CASE("Materialize refuses to overwrite, and never writes through links") {
  TempDir tmp;
  Tree tree = Synthesize(testing::MiniHost()).value();
  fs::create_directories(tmp / "out");
  std::ofstream(tmp / "out/keep") << "x";
  auto refused = Materialize(tree, tmp / "out");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().errnum == EEXIST);
  CHECK_THAT(refused.error().reason, Catch::Contains("--force"));

  // The output path itself is a symlink to a victim directory: refused, victim untouched.
  fs::create_directories(tmp / "victim");
  fs::create_directory_symlink(tmp / "victim", tmp / "link");
  auto via_link = Materialize(tree, tmp / "link");
  REQUIRE_FALSE(via_link.ok());
  CHECK((via_link.error().errnum == ELOOP || via_link.error().errnum == ENOTDIR));
  CHECK_THAT(via_link.error().reason, Catch::Contains("symbolic link"));
  CHECK(fs::is_empty(tmp / "victim"));

  // --force empties the directory without following a link planted in it.
  std::ofstream(tmp / "victim/precious") << "x";
  fs::create_directory_symlink(tmp / "victim", tmp / "out/devices");
  MaterializeOptions force;
  force.replace_existing = true;
  REQUIRE(Materialize(tree, tmp / "out", force).ok());
  CHECK(fs::exists(tmp / "victim/precious"));
  CHECK_FALSE(fs::exists(tmp / "out/keep"));
  CHECK(fs::is_directory(fs::symlink_status(tmp / "out/devices")));
  // Rendering again over a rendered tree (read-only files) works with --force.
  REQUIRE(Materialize(tree, tmp / "out", force).ok());
}

}  // namespace
}  // namespace rxp::sysfs
