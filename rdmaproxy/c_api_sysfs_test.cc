// The C API's /sys: a sentry's devices narrow a host snapshot, each uverbs node renamed as the
// sentry serves it; every entry point answers the kernel's errno, and bad handles, bad
// snapshots and devices the snapshot lacks are refused with a reason. The host is
// sysfs/testing's MiniHost (mlx5_0..2 on uverbs0..2, rxe0 on uverbs3); the device files are
// never opened here.
#include <catch2/catch.hpp>
#include <rdma/ib_user_ioctl_verbs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "rdmaproxy/rdmaproxy.h"
#include "sysfs/snapshot_schema.h"
#include "sysfs/testing/hosts.h"

namespace {

int NoRead(void*, uint64_t, void*, size_t) { return -EFAULT; }
int NoWrite(void*, uint64_t, const void*, size_t) { return -EFAULT; }
int NoHost(void*, uint64_t, uint64_t, uint64_t*) { return -EFAULT; }
int NoFd(void*, int, rxp_fd_target*) { return -EBADF; }
int NoInstall(void*, rxp_file*) { return -EMFILE; }
const rxp_app_ops kOps{sizeof(rxp_app_ops), NoRead, NoWrite, NoHost, NoFd, NoInstall};

std::string HostJson() {
  return rxp::sysfs::SerializeSnapshot(rxp::sysfs::testing::MiniHost());
}

// A sentry whose app sees `devices` ({sandbox name, host node}) with explicit driver ids.
rxp_sentry* MakeSentry(const std::vector<std::pair<std::string, std::string>>& devices) {
  rxp_config* c = nullptr;
  REQUIRE(rxp_config_create(&c) == 0);
  REQUIRE(rxp_config_set_app_ops(c, &kOps) == 0);
  for (const auto& [sandbox, host] : devices)
    REQUIRE(rxp_config_add_device(c, sandbox.c_str(), ("/dev/infiniband/" + host).c_str(),
                                  RDMA_DRIVER_MLX5) == 0);
  rxp_sentry* s = nullptr;
  REQUIRE(rxp_sentry_create(c, &s) == 0);
  REQUIRE(rxp_config_destroy(c) == 0);
  return s;
}

std::string Read(rxp_sysfs* fs, const std::string& path) {
  char buf[256];
  const long n = rxp_sysfs_read(fs, path.c_str(), 0, buf, sizeof(buf));
  REQUIRE(n >= 0);
  return std::string(buf, static_cast<size_t>(n));
}

std::set<std::string> List(rxp_sysfs* fs, const std::string& path) {
  std::set<std::string> names;
  const int r = rxp_sysfs_readdir(
      fs, path.c_str(),
      [](void* ctx, const char* name, uint32_t, uint64_t) {
        static_cast<std::set<std::string>*>(ctx)->insert(name);
        return 0;
      },
      &names);
  REQUIRE(r == 0);
  return names;
}

}  // namespace

TEST_CASE("the app's /sys has the sentry's devices under their sandbox names") {
  // The app sees host uverbs2 (mlx5_2) as uverbs0 and host uverbs3 (rxe0) as uverbs1.
  rxp_sentry* s = MakeSentry({{"uverbs0", "uverbs2"}, {"uverbs1", "uverbs3"}});
  rxp_sysfs* fs = nullptr;
  REQUIRE(rxp_sysfs_create(s, HostJson().c_str(), &fs) == 0);

  CHECK(List(fs, "/sys/class/infiniband") == std::set<std::string>{"mlx5_2", "rxe0"});
  CHECK(List(fs, "/sys/class/infiniband_verbs") ==
        std::set<std::string>{"abi_version", "uverbs0", "uverbs1"});
  CHECK(Read(fs, "/sys/class/infiniband_verbs/uverbs0/ibdev") == "mlx5_2\n");
  CHECK(Read(fs, "/sys/class/infiniband_verbs/uverbs1/ibdev") == "rxe0\n");
  // The node's number is the host's: the runtime creates /dev/infiniband/uverbs0 with it.
  CHECK(Read(fs, "/sys/class/infiniband_verbs/uverbs0/dev") == "231:194\n");

  // Symlinks, stat, realpath-style resolution through them.
  char link[256];
  const long n = rxp_sysfs_readlink(fs, "/sys/class/infiniband/mlx5_2", link, sizeof(link));
  REQUIRE(n > 0);
  CHECK(std::string(link, static_cast<size_t>(n)).find("0000:81:00.1/infiniband/mlx5_2") !=
        std::string::npos);
  CHECK(rxp_sysfs_readlink(fs, "/sys/class/infiniband/mlx5_2", link, 4) == 4);  // truncated
  rxp_sysfs_statbuf st{};
  REQUIRE(rxp_sysfs_stat(fs, "/sys/class/infiniband/mlx5_2", 0, &st) == 0);
  CHECK(S_ISLNK(st.mode));
  REQUIRE(rxp_sysfs_stat(fs, "/sys/class/infiniband/mlx5_2", 1, &st) == 0);
  CHECK(S_ISDIR(st.mode));
  REQUIRE(rxp_sysfs_stat(fs, "/sys/class/infiniband/mlx5_2/node_type", 1, &st) == 0);
  CHECK(S_ISREG(st.mode));
  CHECK(st.size == 4096);
  CHECK(rxp_sysfs_resolve(fs, "/sys/class/infiniband/mlx5_2/ports/1/state", 1, nullptr, 0) ==
        RXP_SYSFS_SYNTHESIZED);

  // What the sentry does not serve is hidden, with the kernel's errors.
  CHECK(rxp_sysfs_stat(fs, "/sys/class/infiniband/mlx5_0", 0, &st) == -ENOENT);
  CHECK(rxp_sysfs_read(fs, "/sys/class/infiniband", 0, link, sizeof(link)) == -EISDIR);
  CHECK(rxp_sysfs_readlink(fs, "/sys/class", link, sizeof(link)) == -EINVAL);
  CHECK(rxp_sysfs_readdir(fs, "/sys/class/infiniband_verbs/abi_version",
                          [](void*, const char*, uint32_t, uint64_t) { return 0; },
                          nullptr) == -ENOTDIR);

  // A passthrough point is the host's: resolve gives its path, the rest say EXDEV.
  char host[128];
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/online", 1, host, sizeof(host)) ==
        RXP_SYSFS_HOST);
  CHECK(std::string(host) == "/sys/devices/system/cpu/online");
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/online", 1, host, 8) == -ENAMETOOLONG);
  CHECK(rxp_sysfs_read(fs, "/sys/devices/system/cpu/online", 0, link, sizeof(link)) == -EXDEV);
  CHECK(rxp_sysfs_readlink(fs, "/sys/class/infiniband/mlx5_2", link, 0) == -EINVAL);

  // Out of a passthrough directory is back in the synthesized tree, resolved as one tree
  // (this machine's own /sys is the host's): never a host path outside the directory, never
  // what the tree hides.
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/../../../../etc/shadow", 1, host,
                          sizeof(host)) == -ENOENT);
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/../../../class/infiniband/mlx5_0", 1,
                          host, sizeof(host)) == -ENOENT);
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/cpu0/../../../../class/infiniband", 1,
                          host, sizeof(host)) == RXP_SYSFS_SYNTHESIZED);
  CHECK(List(fs, "/sys/devices/system/cpu/cpu0/../../../../class/infiniband") ==
        std::set<std::string>{"mlx5_2", "rxe0"});
  CHECK(Read(fs, "/sys/devices/system/cpu/../../../class/infiniband_verbs/uverbs1/ibdev") ==
        "rxe0\n");
  REQUIRE(rxp_sysfs_stat(fs, "/sys/devices/system/cpu/../../../class/infiniband/mlx5_2", 0,
                         &st) == 0);
  CHECK(S_ISLNK(st.mode));
  CHECK(rxp_sysfs_readlink(fs, "/sys/devices/system/cpu/../../../class/infiniband/mlx5_2", link,
                           sizeof(link)) == n);
  CHECK(rxp_sysfs_stat(fs, "/sys/devices/system/cpu/../../../class/infiniband/mlx5_0", 0, &st) ==
        -ENOENT);
  // A host link out of the directory is followed in the tree too: cpu0/subsystem is
  // ../../../../bus/cpu, which the tree does not have; the link itself is the host's.
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/cpu0/subsystem/devices", 1, host,
                          sizeof(host)) == -ENOENT);
  CHECK(rxp_sysfs_resolve(fs, "/sys/devices/system/cpu/cpu0/subsystem", 0, host, sizeof(host)) ==
        RXP_SYSFS_HOST);
  CHECK(std::string(host) == "/sys/devices/system/cpu/cpu0/subsystem");
  CHECK(rxp_sysfs_stat(fs, "/sys/devices/system/cpu/cpu0", 1, &st) == -EXDEV);

  // A walk can stop early; the callback's value comes back.
  CHECK(rxp_sysfs_readdir(fs, "/sys/class/infiniband",
                          [](void*, const char*, uint32_t, uint64_t) { return 7; },
                          nullptr) == 7);

  // Materialized: the same tree on disk, and never over an existing tree.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rxp-capi-sysfs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  REQUIRE(rxp_sysfs_materialize(fs, dir.c_str()) == 0);
  std::ifstream ibdev(dir / "class/infiniband_verbs/uverbs1/ibdev");
  std::string line;
  std::getline(ibdev, line);
  CHECK(line == "rxe0");
  CHECK(rxp_sysfs_materialize(fs, dir.c_str()) < 0);
  std::filesystem::remove_all(dir);

  REQUIRE(rxp_sysfs_destroy(fs) == 0);
  REQUIRE(rxp_sentry_destroy(s) == 0);
}

TEST_CASE("a sysfs survives its sentry handle") {
  rxp_sentry* s = MakeSentry({{"uverbs0", "uverbs0"}});
  rxp_sysfs* fs = nullptr;
  REQUIRE(rxp_sysfs_create(s, HostJson().c_str(), &fs) == 0);
  REQUIRE(rxp_sentry_destroy(s) == 0);
  CHECK(Read(fs, "/sys/class/infiniband_verbs/uverbs0/ibdev") == "mlx5_0\n");
  REQUIRE(rxp_sysfs_destroy(fs) == 0);
}

TEST_CASE("bad snapshots and devices the snapshot lacks are refused") {
  rxp_sysfs* fs = nullptr;
  SECTION("malformed JSON and a hostile name") {
    rxp_sentry* s = MakeSentry({});
    CHECK(rxp_sysfs_create(s, "{", &fs) == -EINVAL);
    CHECK(!std::string(rxp_last_error()).empty());
    std::string hostile = HostJson();
    const auto at = hostile.find("\"mlx5_1\"");
    REQUIRE(at != std::string::npos);
    hostile.replace(at, 8, "\"../x\"");
    CHECK(rxp_sysfs_create(s, hostile.c_str(), &fs) == -EINVAL);
    CHECK(fs == nullptr);
    REQUIRE(rxp_sentry_destroy(s) == 0);
  }
  SECTION("a device node the snapshot does not describe") {
    rxp_sentry* s = MakeSentry({{"uverbs0", "uverbs9"}});
    CHECK(rxp_sysfs_create(s, HostJson().c_str(), &fs) == -ENODEV);
    CHECK(std::string(rxp_last_error()).find("uverbs9") != std::string::npos);
    REQUIRE(rxp_sentry_destroy(s) == 0);
  }
  SECTION("NULL arguments") {
    rxp_sentry* s = MakeSentry({});
    CHECK(rxp_sysfs_create(s, nullptr, &fs) == -EINVAL);
    CHECK(rxp_sysfs_create(s, "{}", nullptr) == -EINVAL);
    REQUIRE(rxp_sysfs_create(s, HostJson().c_str(), &fs) == 0);
    CHECK(rxp_sysfs_stat(fs, nullptr, 0, nullptr) == -EINVAL);
    CHECK(rxp_sysfs_stat(fs, "/sys", 0, nullptr) == -EINVAL);
    CHECK(rxp_sysfs_readdir(fs, "/sys", nullptr, nullptr) == -EINVAL);
    CHECK(rxp_sysfs_read(fs, "/sys/class", 0, nullptr, 4) == -EINVAL);
    // With no devices the sandbox has no RDMA class entries at all.
    rxp_sysfs_statbuf st{};
    CHECK(rxp_sysfs_stat(fs, "/sys/class/infiniband/mlx5_0", 0, &st) == -ENOENT);
    REQUIRE(rxp_sysfs_destroy(fs) == 0);
    REQUIRE(rxp_sentry_destroy(s) == 0);
  }
}

TEST_CASE("sysfs entry points reject bad and destroyed handles with EINVAL") {
  rxp_sentry* s = MakeSentry({});
  rxp_sysfs* fs = nullptr;
  REQUIRE(rxp_sysfs_create(s, HostJson().c_str(), &fs) == 0);
  REQUIRE(rxp_sysfs_destroy(fs) == 0);
  static int not_a_handle = 0;
  for (rxp_sysfs* bad : {fs, static_cast<rxp_sysfs*>(nullptr),
                         reinterpret_cast<rxp_sysfs*>(&not_a_handle)}) {
    char buf[8];
    rxp_sysfs_statbuf st{};
    CHECK(rxp_sysfs_destroy(bad) == -EINVAL);
    CHECK(rxp_sysfs_resolve(bad, "/sys", 1, buf, sizeof(buf)) == -EINVAL);
    CHECK(rxp_sysfs_stat(bad, "/sys", 1, &st) == -EINVAL);
    CHECK(rxp_sysfs_readlink(bad, "/sys", buf, sizeof(buf)) == -EINVAL);
    CHECK(rxp_sysfs_read(bad, "/sys", 0, buf, sizeof(buf)) == -EINVAL);
    CHECK(rxp_sysfs_readdir(bad, "/sys", [](void*, const char*, uint32_t, uint64_t) { return 0; },
                            nullptr) == -EINVAL);
    CHECK(rxp_sysfs_materialize(bad, "/nonexistent") == -EINVAL);
    CHECK(std::string(rxp_last_error()).find("rxp_sysfs") != std::string::npos);
  }
  // A sentry handle that is gone cannot make one.
  REQUIRE(rxp_sentry_destroy(s) == 0);
  CHECK(rxp_sysfs_create(s, HostJson().c_str(), &fs) == -EINVAL);
  rxp_device_info info{};
  CHECK(rxp_sentry_device(s, 0, &info) == -EINVAL);
}
