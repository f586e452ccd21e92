#include "sysfs/materialize.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

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
  CHECK_THAT(refused.error().reason, Catch::Contains("is not empty"));

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

// What a rendered tree holds, by path: type, permission bits, content or link target, inode.
struct Entry {
  fs::file_type type;
  fs::perms perms;
  std::string data;
  ino_t ino;
};
std::map<std::string, Entry> Walk(const std::string& root) {
  std::map<std::string, Entry> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    auto st = it->symlink_status();
    struct stat raw {};
    REQUIRE(::lstat(it->path().c_str(), &raw) == 0);
    Entry e{st.type(), st.permissions(), {}, raw.st_ino};
    if (st.type() == fs::file_type::regular) e.data = Slurp(it->path());
    if (st.type() == fs::file_type::symlink) e.data = fs::read_symlink(it->path()).string();
    out.emplace(it->path().lexically_relative(root).string(), std::move(e));
  }
  return out;
}

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Materialize on a thread of its own: a writer that never finishes fails the run instead of
// hanging it.
Result<MaterializeStats> MaterializeWithDeadline(const Tree& tree, const std::string& dir, unsigned threads) {
  MaterializeOptions options;
  options.threads = threads;
  auto done = std::async(std::launch::async, [&] { return Materialize(tree, dir, options); });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "Materialize(threads=%u) did not return within 60 s\n", threads);
    std::abort();
  }
  return done.get();
}

TEST_CASE("One writer and four write the same tree") {
  // Large enough that subtrees are handed between writers (Pool::kHandOffFrom).
  Tree tree = Synthesize(testing::SyntheticHost(40)).value();
  REQUIRE(tree.size() > 5000);
  TempDir tmp;
  size_t fds = OpenFds();
  auto one = MaterializeWithDeadline(tree, tmp / "one", 1);
  auto four = MaterializeWithDeadline(tree, tmp / "four", 4);
  REQUIRE(one.ok());
  REQUIRE(four.ok());
  CHECK(OpenFds() == fds);  // no directory or link-source fd left behind
  CHECK(one->dirs == four->dirs);
  CHECK(one->files == four->files);
  CHECK(one->links == four->links);
  CHECK(four->dirs + four->files + four->links + 1 == tree.size());

  auto a = Walk(tmp / "one");
  auto b = Walk(tmp / "four");
  CHECK(a.size() + 1 == tree.size());
  REQUIRE(a.size() == b.size());
  for (const auto& [path, entry] : a) {
    auto it = b.find(path);
    INFO(path);
    REQUIRE(it != b.end());
    CHECK(it->second.type == entry.type);
    CHECK(it->second.perms == entry.perms);
    CHECK(it->second.data == entry.data);
  }
  // Hard links join only files of equal content and mode, and repeated content is linked.
  for (const auto* tree_walk : {&a, &b}) {
    std::map<ino_t, const Entry*> by_inode;
    size_t regular = 0;
    for (const auto& [path, entry] : *tree_walk) {
      if (entry.type != fs::file_type::regular) continue;
      ++regular;
      auto [it, fresh] = by_inode.emplace(entry.ino, &entry);
      INFO(path);
      if (!fresh) {
        CHECK(it->second->data == entry.data);
        CHECK(it->second->perms == entry.perms);
      }
    }
    CHECK(by_inode.size() * 4 < regular);
  }
}

TEST_CASE("A write that fails stops every writer and is the error returned") {
  // Forty subtrees of 300 files; some hold a link whose target the kernel refuses
  // (ENAMETOOLONG: longer than PATH_MAX, though every component is fine for the tree).
  Tree tree;
  std::string too_long;
  while (too_long.size() < 5000) too_long += "a/";
  too_long += "a";
  for (int i = 0; i < 40; ++i) {
    NodeId sub = tree.Mkdir(Tree::kRoot, fmt::format("d{}", i)).value();
    if (i % 10 == 3) REQUIRE(tree.AddSymlink(sub, "bad", too_long).ok());
    for (int f = 0; f < 300; ++f) REQUIRE(tree.AddFile(sub, fmt::format("f{}", f), fmt::format("{}\n", f % 7)).ok());
  }
  for (unsigned threads : {1u, 2u, 4u}) {
    INFO("threads " << threads);
    TempDir tmp;
    size_t fds = OpenFds();
    auto r = MaterializeWithDeadline(tree, tmp / "sys", threads);
    REQUIRE_FALSE(r.ok());
    // The kernel's error, not the ECANCELED of a writer that was stopped.
    CHECK(r.error().errnum == ENAMETOOLONG);
    CHECK_THAT(r.error().reason, Catch::StartsWith("symlink /sys/d") && Catch::Contains("/bad: "));
    CHECK(OpenFds() == fds);  // queued directories and link sources are closed on failure too
    if (threads == 1) {
      // One writer stops at the first failure: nothing of d3 after the link, nothing after d3.
      CHECK(fs::exists(tmp / "sys/d2/f299"));
      CHECK(fs::is_empty(tmp / "sys/d3"));
      CHECK_FALSE(fs::exists(tmp / "sys/d4"));
    }
  }
}

}  // namespace
}  // namespace rxp::sysfs
