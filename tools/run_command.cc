// `rdmaproxy run [options] -- prog args...`: runs a program under the ptrace + seccomp harness
// (tools/harness, docs/harness.md) and exits with the program's status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/commands.h"
#include "tools/handler_factory.h"
#include "tools/harness/device_map.h"
#include "tools/harness/device_view.h"
#include "tools/harness/fd_range.h"
#include "tools/harness/harness.h"
#include "tools/harness/seccomp_filter.h"
#include "rdmaproxy/host_rdma_devices.h"

namespace rxp::tools {
namespace {

struct RunOptions {
  std::string devices;
  std::string trace;  // "-": stderr; else a file
  std::string policy;
  std::string sysfs_dir;
  bool stats = false;
  std::vector<std::string> command;
};

// Errors at the CLI edge become exceptions; main() prints them as one line.
template <typename T>
T OrThrow(Result<T> result) {
  if (!result.ok()) throw std::runtime_error(result.error().ToString());
  return std::move(result).value();
}

std::string ReadPolicy(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("--policy {}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error(fmt::format("--policy {}: read error", path));
  return text.str();
}

struct FileCloser {
  void operator()(FILE* f) const {
    if (f != nullptr && f != stderr) std::fclose(f);
  }
};

int Run(const RunOptions& options) {
  using namespace rxp::harness;
  std::unique_ptr<FILE, FileCloser> trace;
  if (!options.trace.empty()) {
    if (options.trace == "-") {
      trace.reset(stderr);
    } else {
      trace.reset(std::fopen(options.trace.c_str(), "we"));
      if (!trace)
        throw std::runtime_error(fmt::format("--trace {}: {}", options.trace, std::strerror(errno)));
      setvbuf(trace.get(), nullptr, _IOLBF, 0);
    }
  }
  Log log(stderr, trace.get());

  FactoryContext context;
  context.log = &log;
  if (!options.policy.empty()) {
    context.policy_path = options.policy;
    context.policy_text = ReadPolicy(options.policy);
  }
  // Devices from sysfs, their driver ids (which every ioctl header must carry) from
  // NETLINK_RDMA; a host without RDMA netlink has no devices to proxy either.
  auto netlink = proxy::QueryHostRdmaDevices();
  const auto host_devices = WithDriverIds(OrThrow(DiscoverHostDevices()),
                                          netlink.ok() ? *netlink
                                                       : std::vector<proxy::HostRdmaDevice>{});
  context.devices = OrThrow(ParseDeviceList(options.devices, host_devices));

  DeviceViewOptions view_options;
  if (!options.sysfs_dir.empty()) view_options.sysfs_dir = options.sysfs_dir;
  auto view = OrThrow(DeviceView::Create(context.devices, view_options));
  RuleResolver resolver(view->rules());
  auto factory = MakeRunFactory(context);

  HarnessOptions harness;
  harness.argv = options.command;
  harness.range = OrThrow(FdRange::ForThisProcess());
  harness.resolver = &resolver;
  harness.factory = &factory->factory();
  harness.log = &log;
  auto run = OrThrow(RunHarness(harness));
  if (options.stats) {
    const TracerStats& s = run.stats;
    fmt::print(stderr,
               "rdmaproxy: stops: seccomp {}, syscall-exit {}; injected {}; signals {}; "
               "paths rewritten {}, refused {}; fds moved {}; denied {}\n",
               s.seccomp_stops, s.exit_stops, s.injected_syscalls, s.signals_delivered,
               s.paths_rewritten, s.paths_failed, s.fds_moved, s.denied);
    factory->PrintStats(stderr);
  }
  // Everything the run held (view directory, trace file) is released before the harness ends
  // like the program did.
  factory.reset();
  view.reset();
  trace.reset();
  TerminateLike(run.wait_status);
  return ExitCodeOf(run.wait_status);
}

}  // namespace

void AddRunCommands(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand(
      "run", "Run a program under the syscall-level RDMA proxy (ptrace + seccomp harness)");
  run->add_option("--devices", options->devices,
                  "Host devices the program may use, as [SANDBOX=]HOST,... where HOST is a "
                  "uverbs or IB device name and SANDBOX a uverbs name (default: all, same names)");
  run->add_flag("--trace{-}", options->trace,
                "Print one line per intercepted call, to stderr or (--trace=FILE) to FILE");
  run->add_option("--policy", options->policy, "Policy file for the proxy engine")
      ->check(CLI::ExistingFile);
  run->add_option("--sysfs-dir", options->sysfs_dir,
                  "Serve /sys from this rendered directory instead of the host's")
      ->check(CLI::ExistingDirectory);
  run->add_flag("--stats", options->stats, "Print stop and call counters when the program ends");
  run->add_option("command", options->command, "The program and its arguments (after --)")
      ->required();
  RegisterRunner(run, [options] { return Run(*options); });
}

}  // namespace rxp::tools
