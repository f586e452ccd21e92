// rxp_sysfs_bench [DGX_SNAPSHOT]: how fast the sysfs module builds and serves a tree.
//
// Prints (figures are printed, not asserted; the project tracks speed with benchmarks):
//   - synthesize + materialize of the DGX-H100 fixture, in ms (target <= 20 ms);
//   - synthesis cost per device on generated 100-, 1,000- and 10,000-device hosts (linear:
//     the per-device figure stays flat), and synthesize + materialize per device;
//   - VFS lookup latency (stat following links) for the paths NCCL and libibverbs read, in
//     ns (target: median <= 1 us).
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <sys/vfs.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sysfs/materialize.h"
#include "sysfs/snapshot_io.h"
#include "sysfs/synthesize.h"
#include "sysfs/testing/hosts.h"
#include "sysfs/testing/temp_dir.h"
#include "sysfs/vfs.h"

namespace {

using Clock = std::chrono::steady_clock;
using rxp::sysfs::Snapshot;
using rxp::sysfs::Tree;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double Ns(Clock::duration d) { return std::chrono::duration<double, std::nano>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

using Scratch = rxp::sysfs::testing::TempDir;  // tmpfs (/dev/shm) unless TMPDIR says otherwise

// What kind of filesystem the scratch directories are on (the figures depend on it).
std::string ScratchKind() {
  Scratch probe;
  struct statfs st {};
  bool tmpfs = ::statfs(probe.path().c_str(), &st) == 0 && st.f_type == 0x01021994;  // TMPFS_MAGIC
  return fmt::format("{} ({})", std::filesystem::path(probe.path()).parent_path().string(), tmpfs ? "tmpfs" : "not tmpfs");
}

Tree MustSynthesize(const Snapshot& s) {
  auto t = rxp::sysfs::Synthesize(s);
  if (!t) {
    fmt::print(stderr, "rxp_sysfs_bench: {}\n", t.error().ToString());
    std::exit(1);
  }
  return std::move(*t);
}

// Synthesize (and optionally materialize) `s` `runs` times; returns per-run ms.
std::pair<std::vector<double>, std::vector<double>> Measure(const Snapshot& s, int runs, bool materialize) {
  std::vector<double> synth, total;
  for (int i = 0; i < runs; ++i) {
    Scratch out;
    auto t0 = Clock::now();
    Tree tree = MustSynthesize(s);
    auto t1 = Clock::now();
    if (materialize) {
      auto r = rxp::sysfs::Materialize(tree, out / "sys");
      if (!r) {
        fmt::print(stderr, "rxp_sysfs_bench: {}\n", r.error().ToString());
        std::exit(1);
      }
    }
    auto t2 = Clock::now();
    synth.push_back(Ms(t1 - t0));
    total.push_back(Ms(t2 - t0));
  }
  return {synth, total};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dgx_path = argc > 1 ? argv[1] : "tests/data/sysfs/dgx_h100.snapshot.json";
  auto dgx = rxp::sysfs::LoadSnapshotFile(dgx_path);
  if (!dgx) {
    fmt::print(stderr, "rxp_sysfs_bench: {}\n", dgx.error().ToString());
    return 1;
  }
  fmt::print("rdmaproxy sysfs benchmark (materializing into {})\n\n", ScratchKind());
  // The suite runs this right after the build: write its output back first, so that the kernel's
  // writeback of gigabytes of object files cannot share the cores with the measurement.
  ::sync();

  // 1. The DGX fixture.
  size_t nodes = MustSynthesize(*dgx).size();
  auto [synth, total] = Measure(*dgx, 15, true);
  double t = Median(total);
  fmt::print("DGX-H100 fixture ({} RDMA devices, {} PCI functions, {} tree nodes):\n",
             dgx->rdma_devices.size(), dgx->pci_functions.size(), nodes);
  fmt::print("  synthesize                median {:7.2f} ms\n", Median(synth));
  fmt::print("  synthesize + materialize  median {:7.2f} ms (min {:.2f})   target <= 20 ms: {}\n", t,
             *std::min_element(total.begin(), total.end()), t <= 20 ? "met" : "MISSED");
  // The floor this filesystem sets: one linkat per entry (materialize's cheapest operation),
  // shared among the writers materialize runs (MaterializeOptions::threads' default).
  {
    Scratch floor;
    int dirfd = ::open(floor.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int f = ::openat(dirfd, "src", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    ::close(f);
    auto t0 = Clock::now();
    for (int i = 0; i < 2000; ++i) ::linkat(dirfd, "src", dirfd, std::to_string(i).c_str(), 0);
    double per = Ns(Clock::now() - t0) / 2000;
    ::close(dirfd);
    const unsigned writers = rxp::sysfs::MaterializeWriters({});
    const double floor_ms = per * static_cast<double>(nodes - 1) / 1e6;
    fmt::print("  (this filesystem: linkat {:.1f} us; x {} tree entries = a {:.1f} ms floor on one core, "
               "{:.1f} ms for the {} writers materialize runs here)\n\n",
               per / 1000, nodes - 1, floor_ms, floor_ms / writers, writers);
  }

  // 2. Scaling on generated hosts.
  fmt::print("Generated hosts (per slot: root port, switch, NIC with uverbs and IPoIB netdev, GPU):\n");
  double per100 = 0;
  for (size_t n : {100u, 1000u, 10000u}) {
    Snapshot host = rxp::sysfs::testing::SyntheticHost(n);
    int runs = n >= 10000 ? 3 : 5;
    auto [s_ms, unused] = Measure(host, runs, false);
    (void)unused;
    double ns_per_device = Median(s_ms) * 1e6 / static_cast<double>(n);
    if (n == 100) per100 = ns_per_device;
    size_t nodes_n = MustSynthesize(host).size();
    fmt::print("  {:>6} devices: synthesize {:8.2f} ms = {:7.0f} ns/device, {:4.0f} ns/node ({} nodes; x{:.2f} of the 100-device figure)\n",
               n, Median(s_ms), ns_per_device, Median(s_ms) * 1e6 / static_cast<double>(nodes_n), nodes_n,
               ns_per_device / per100);
  }
  for (size_t n : {100u, 1000u}) {
    Snapshot host = rxp::sysfs::testing::SyntheticHost(n);
    auto [unused, all] = Measure(host, n >= 1000 ? 1 : 3, true);
    (void)unused;
    fmt::print("  {:>6} devices: synthesize + materialize {:8.2f} ms = {:7.0f} ns/device\n", n, Median(all),
               Median(all) * 1e6 / static_cast<double>(n));
  }

  // 3. VFS lookups on the DGX tree.
  rxp::sysfs::SysfsVfs vfs(std::make_shared<const Tree>(MustSynthesize(*dgx)));
  const std::vector<std::string> paths = {
      "/sys/class/infiniband/mlx5_0/device/numa_node",           // NCCL/hwloc: a link into the PCI tree
      "/sys/class/pci_bus/0000:1b/../../0000:1b:00.0/class",     // ncclOsGetPciPath
      "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0",  // ncclIbRoceGetVersionNum
      "/sys/class/infiniband_verbs/uverbs0/dev",                 // libibverbs find_sysfs_devs
      "/sys/devices/system/node/node1/cpumap",                   // ncclOsGetNumaNodeAffinity
      "/sys/bus/pci/devices/0000:1a:00.0/local_cpus",            // hwloc, mlx5 provider
  };
  fmt::print("\nVFS lookup (stat, following links) on the DGX tree, median of 200 batches x 1000:\n");
  std::vector<double> all;
  for (const auto& p : paths) {
    if (!vfs.Stat(p).ok()) {
      fmt::print(stderr, "rxp_sysfs_bench: {} does not resolve\n", p);
      return 1;
    }
    std::vector<double> batches;
    for (int b = 0; b < 200; ++b) {
      auto t0 = Clock::now();
      for (int i = 0; i < 1000; ++i) {
        auto st = vfs.Stat(p);
        if (!st) return 1;
      }
      batches.push_back(Ns(Clock::now() - t0) / 1000);
    }
    double m = Median(batches);
    all.insert(all.end(), batches.begin(), batches.end());
    fmt::print("  {:58} {:6.0f} ns\n", p, m);
  }
  double m = Median(all);
  fmt::print("  all paths                                                  {:6.0f} ns   target <= 1000 ns: {}\n", m,
             m <= 1000 ? "met" : "MISSED");
  return 0;
}
