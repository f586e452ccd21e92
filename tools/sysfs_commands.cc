// rdmaproxy sysfs snapshot|select|render|show: the command-line face of the sysfs module
// (docs/sysfs.md). Errors become one line on stderr and exit status 1.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sysfs/disk_fs.h"
#include "sysfs/materialize.h"
#include "sysfs/select.h"
#include "sysfs/snapshot_io.h"
#include "sysfs/snapshot_reader.h"
#include "sysfs/synthesize.h"
#include "sysfs/topo_matrix.h"
#include "tools/commands.h"

namespace rxp::tools {
namespace {

using sysfs::Snapshot;

int Report(std::string_view command, const Error& error) {
  fmt::print(stderr, "rdmaproxy sysfs {}: {}\n", command, error.ToString());
  return 1;
}

// The same for an error about a path inside the sysfs tree `root`.
int Report(std::string_view command, const Error& error, std::string_view root) {
  fmt::print(stderr, "rdmaproxy sysfs {}: {}: {}\n", command, root, error.ToString());
  return 1;
}

// Standard output, checked: a full disk or a closed pipe fails the command (exit 1) instead of
// losing the output at exit, when stdio flushes it and nobody looks.
Result<void> WriteStdout(std::string_view text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    const int errnum = errno != 0 ? errno : EIO;
    std::clearerr(stdout);
    return Fail(errnum, "cannot write to standard output: {}", std::strerror(errnum));
  }
  return Ok();
}

// -o / --write-selected: '-' is stdout; a path is written by SaveSnapshotFile.
Result<void> SaveOutput(const Snapshot& snapshot, const std::string& path) {
  if (path == "-") return WriteStdout(sysfs::SerializeSnapshot(snapshot));
  return sysfs::SaveSnapshotFile(snapshot, path);
}

std::optional<std::vector<std::string>> ListOption(const CLI::Option* opt,
                                                   const std::vector<std::string>& values) {
  if (opt->count() == 0) return std::nullopt;
  return values;
}

struct SelectFlags {
  std::vector<std::string> devices, netdevs;
  CLI::Option* devices_opt = nullptr;
  CLI::Option* netdevs_opt = nullptr;
  bool drop_gidless = false;
  bool renumber = false;
  std::string dev_base;

  void Add(CLI::App* sub) {
    devices_opt = sub->add_option("--devices", devices, "RDMA devices the sandbox gets (default: all)")
                      ->delimiter(',')->allow_extra_args(false)->type_name("NAME[,NAME...]");
    netdevs_opt = sub->add_option("--netdevs", netdevs,
                                  "netdevs the sandbox gets (default: those of the kept devices)")
                      ->delimiter(',')->allow_extra_args(false)->type_name("NAME[,NAME...]");
    sub->add_flag("--drop-gidless", drop_gidless,
                  "drop RDMA devices (and their NIC functions) with no GID usable in the sandbox");
    sub->add_flag("--renumber", renumber, "rename uverbs devices to uverbs0..N-1, keeping the host mapping");
    sub->add_option("--uverbs-dev-base", dev_base,
                    "with --renumber: MAJOR:MINOR of the sandbox's first uverbs node (default: host numbers)");
  }

  Result<Snapshot> Apply(const Snapshot& host) const {
    sysfs::SelectOptions o;
    o.devices = ListOption(devices_opt, devices);
    o.netdevs = ListOption(netdevs_opt, netdevs);
    o.drop_gidless = drop_gidless;
    o.renumber = renumber;
    if (!dev_base.empty()) {
      auto base = sysfs::ParseDevNum(dev_base);
      if (!base) return Fail(EINVAL, "--uverbs-dev-base: {}", base.error().reason);
      o.uverbs_dev_base = *base;
    }
    return sysfs::Select(host, o);
  }
};

// Loads a snapshot and applies the selection flags.
Result<Snapshot> LoadSelected(const std::string& path, const SelectFlags& select) {
  auto host = sysfs::LoadSnapshotFile(path);
  if (!host) return std::move(host).error();
  return select.Apply(*host);
}

void AddSnapshot(CLI::App* sysfs) {
  struct Flags {
    std::string root = "/sys", out;
    std::vector<std::string> devices, netdevs;
    CLI::Option* devices_opt = nullptr;
    CLI::Option* netdevs_opt = nullptr;
  };
  auto f = std::make_shared<Flags>();
  auto* sub = sysfs->add_subcommand("snapshot", "Read a host sysfs into a snapshot (JSON)");
  sub->add_option("--root", f->root, "the sysfs to read (default /sys; a fake root's sys/ for tests)");
  f->devices_opt = sub->add_option("--devices", f->devices, "RDMA devices to include (default: all)")
                       ->delimiter(',')->allow_extra_args(false)->type_name("NAME[,NAME...]");
  f->netdevs_opt = sub->add_option("--netdevs", f->netdevs, "netdevs to include (default: see docs/sysfs.md)")
                       ->delimiter(',')->allow_extra_args(false)->type_name("NAME[,NAME...]");
  sub->add_option("-o,--output", f->out, "snapshot file to write ('-' for stdout)")->required();
  RegisterRunner(sub, [f] {
    auto disk = sysfs::DiskFs::Open(f->root);
    if (!disk) return Report("snapshot", disk.error());
    sysfs::ReadOptions opts;
    opts.devices = ListOption(f->devices_opt, f->devices);
    opts.netdevs = ListOption(f->netdevs_opt, f->netdevs);
    // The reader's paths are the tree's own (/class/infiniband): the line names the root they
    // are under, which for a fake root or a mounted copy is not /sys.
    auto read = sysfs::ReadSnapshot(*disk, opts);
    if (!read) return Report("snapshot", read.error(), f->root);
    for (const auto& w : read->warnings)
      fmt::print(stderr, "rdmaproxy sysfs snapshot: {}: warning: {}\n", f->root, w);
    auto saved = SaveOutput(read->snapshot, f->out);
    if (saved && f->out == "-") return 0;
    if (!saved) return Report("snapshot", saved.error());
    const Snapshot& s = read->snapshot;
    fmt::print(stderr, "rdmaproxy sysfs snapshot: {}: {} RDMA devices, {} netdevs, {} PCI functions, {} NUMA nodes\n",
               f->out, s.rdma_devices.size(), s.netdevs.size(), s.pci_functions.size(),
               s.numa ? s.numa->nodes.size() : 0);
    return 0;
  });
}

void AddSelect(CLI::App* sysfs) {
  struct Flags {
    std::string in, out;
    SelectFlags select;
  };
  auto f = std::make_shared<Flags>();
  auto* sub = sysfs->add_subcommand("select", "Narrow a snapshot to one sandbox (keeps the uverbs host mapping)");
  sub->add_option("snapshot", f->in, "host snapshot")->required();
  sub->add_option("-o,--output", f->out, "selected snapshot to write ('-' for stdout)")->required();
  f->select.Add(sub);
  RegisterRunner(sub, [f] {
    auto selected = LoadSelected(f->in, f->select);
    if (!selected) return Report("select", selected.error());
    auto saved = SaveOutput(*selected, f->out);
    if (!saved) return Report("select", saved.error());
    return 0;
  });
}

void AddRender(CLI::App* sysfs) {
  struct Flags {
    std::string in, out, selected_out;
    bool force = false;
    SelectFlags select;
  };
  auto f = std::make_shared<Flags>();
  auto* sub = sysfs->add_subcommand("render", "Write the synthesized /sys into a directory (bind-mount it on /sys)");
  sub->add_option("snapshot", f->in, "host snapshot")->required();
  sub->add_option("-o,--output", f->out, "directory to create (must be empty or absent)")->required();
  sub->add_flag("--force", f->force, "empty a non-empty output directory first");
  sub->add_option("--write-selected", f->selected_out, "also save the selected snapshot (with the uverbs mapping; '-' for stdout)");
  f->select.Add(sub);
  RegisterRunner(sub, [f] {
    auto selected = LoadSelected(f->in, f->select);
    if (!selected) return Report("render", selected.error());
    auto tree = sysfs::Synthesize(*selected);
    if (!tree) return Report("render", tree.error());
    // The selected snapshot first: a --write-selected path that cannot be written stops the
    // render before it writes anything.
    if (!f->selected_out.empty()) {
      auto saved = SaveOutput(*selected, f->selected_out);
      if (!saved) return Report("render", saved.error());
    }
    sysfs::MaterializeOptions mo;
    mo.replace_existing = f->force;
    auto stats = sysfs::Materialize(*tree, f->out, mo);
    if (!stats && stats.error().errnum == EEXIST && !f->force)
      return Report("render", Fail(EEXIST, "{}; pass --force to replace its contents",
                                   stats.error().reason));
    if (!stats) return Report("render", stats.error());
    fmt::print(stderr, "rdmaproxy sysfs render: {}: {} directories, {} files, {} links\n", f->out,
               stats->dirs, stats->files, stats->links);
    return 0;
  });
}

void AddShow(CLI::App* sysfs) {
  struct Flags {
    std::string in;
    SelectFlags select;
  };
  auto f = std::make_shared<Flags>();
  auto* sub = sysfs->add_subcommand("show", "Print the GPU/NIC matrix (like nvidia-smi topo -m) and NUMA affinity");
  sub->add_option("snapshot", f->in, "snapshot")->required();
  f->select.Add(sub);
  RegisterRunner(sub, [f] {
    auto selected = LoadSelected(f->in, f->select);
    if (!selected) return Report("show", selected.error());
    std::string out = sysfs::FormatTopoMatrix(sysfs::BuildTopoMatrix(*selected));
    if (selected->numa) {
      out += "\nNUMA nodes:\n\n";
      for (const auto& n : selected->numa->nodes) {
        std::string memory =
            n.mem_total_kb ? fmt::format(", {:.1f} GiB", static_cast<double>(*n.mem_total_kb) / (1 << 20)) : "";
        std::string distance = n.distance.empty() ? "" : fmt::format(" (distance {})", n.distance);
        out += fmt::format("  node{}: cpus {}{}{}\n", n.id, n.cpulist, memory, distance);
      }
    }
    const auto& pm = selected->peer_memory;
    std::vector<std::string_view> markers;
    if (pm.nvidia_peermem) markers.push_back("nvidia_peermem");
    if (pm.nv_mem) markers.push_back("nv_mem");
    if (pm.nv_mem_nc) markers.push_back("nv_mem_nc");
    out += fmt::format("\nGPUDirect RDMA peer-memory markers: {}\n",
                       markers.empty() ? std::string("none (GPUDirect only through DMA-BUF)")
                                       : fmt::format("{}", fmt::join(markers, " ")));
    if (auto written = WriteStdout(out); !written) return Report("show", written.error());
    return 0;
  });
}

}  // namespace

void AddSysfsCommands(CLI::App& app) {
  auto* sysfs = app.add_subcommand("sysfs", "Host sysfs snapshots and the synthesized /sys for sandboxes");
  sysfs->require_subcommand(1);
  AddSnapshot(sysfs);
  AddSelect(sysfs);
  AddRender(sysfs);
  AddShow(sysfs);
}

}  // namespace rxp::tools
