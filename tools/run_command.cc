// `rdmaproxy run [options] -- prog args...`: runs a program under the ptrace + seccomp harness
// (tools/harness, docs/harness.md) and exits with the program's status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "sysfs/snapshot_io.h"
#include "tools/commands.h"
#include "tools/handler_factory.h"
#include "tools/harness/device_map.h"
#include "tools/harness/device_view.h"
#include "tools/harness/fd_range.h"
#include "tools/harness/harness.h"
#include "tools/harness/seccomp_filter.h"
#include "tools/harness/sysfs_view.h"
#include "rdmaproxy/host_rdma_devices.h"
#include "rdmaproxy/policy.h"

namespace rxp::tools {
namespace {

struct RunOptions {
  std::optional<std::string> devices;  // given, even if empty (an error, not "all")
  std::string trace;  // "-": stderr; else a file
  std::optional<std::string> policy;
  std::optional<std::string> sysfs_dir;
  std::optional<std::string> sysfs_snapshot;  // --sysfs FILE (given, even if empty)
  bool sysfs_from_host = false;
  bool stats = false;
  bool freeze_threads = true;
  bool app_issues_all = false;
  bool refuse_netlink = false;
  unsigned stop_poll_us = 0;
  std::vector<std::string> command;
};

// Errors at the CLI edge become exceptions; main() prints them as one line. Everything that
// fails before the program starts ends `rdmaproxy run` with status 2.
constexpr int kSetupFailed = kRunSetupFailed;

template <typename T>
T OrThrow(Result<T> result, std::string_view what = {}) {
  if (!result.ok())
    throw CommandError(kSetupFailed, what.empty() ? result.error().ToString()
                                                  : fmt::format("{}: {}", what, result.error().ToString()));
  return std::move(result).value();
}

// errno's name and text, as the other setup failures print them ("ENOENT: No such file ...").
std::string ErrnoText(int errnum) {
  return Error{errnum, std::strerror(errnum)}.ToString();
}

// A path option must name an existing file (or directory), or the run fails to start: status
// 2, one line with the option, the path and the errno (ENOENT, EISDIR, ENOTDIR, ...).
void RequirePath(std::string_view option, const std::string& path, bool directory) {
  struct stat st {};
  const int err = ::stat(path.c_str(), &st) != 0 ? errno
                  : S_ISDIR(st.st_mode) == directory ? 0
                  : directory ? ENOTDIR
                              : EISDIR;
  if (err != 0)
    throw CommandError(kSetupFailed, fmt::format("{} {}: {}", option, path, ErrnoText(err)));
}

// The policy file's text (proxy::ReadPolicyFile: a regular file, never waited on, so a FIFO
// named by mistake cannot hold the run before it starts).
std::string ReadPolicy(const std::string& path) {
  auto text = proxy::ReadPolicyFile(path);
  if (!text)
    throw CommandError(kSetupFailed, fmt::format("--policy {}: {}", path, text.error().ToString()));
  return std::move(*text);
}

// An option given with an empty value is an error, never its default: an unset shell variable
// (--devices "$DEVS") must not grant every host device or drop the policy.
void RequireNonEmpty(std::string_view option, const std::string& value) {
  if (value.find_first_not_of(" \t") == std::string::npos)
    throw CommandError(kSetupFailed, fmt::format("{}: empty value", option));
}

// --trace=FILE. Opened (created if need be) before the set-up, so that a path that cannot be
// written fails the run at once; emptied only when the set-up has passed (Start), so that a run
// that cannot start leaves the last run's trace as it was -- and removes the file again if it
// was this run that created it.
class TraceFile {
 public:
  explicit TraceFile(const std::string& path) : path_(path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    created_ = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    // A dangling symlink is EEXIST for O_EXCL, ENOENT without O_CREAT: create its target, as
    // a plain open for writing would (whether this run created it is then not known).
    if (fd < 0 && errno == ENOENT) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
      throw CommandError(kSetupFailed, fmt::format("--trace {}: {}", path, ErrnoText(errno)));
    file_ = ::fdopen(fd, "w");
    if (file_ == nullptr) {
      const int err = errno;
      ::close(fd);
      Forget();
      throw CommandError(kSetupFailed, fmt::format("--trace {}: {}", path, ErrnoText(err)));
    }
    setvbuf(file_, nullptr, _IOLBF, 0);
  }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile() {
    std::fclose(file_);
    if (!started_) Forget();
  }

  // The set-up passed: the old trace gives way to this run's (a FIFO or a device is left be).
  FILE* Start() {
    struct stat st {};
    if (::fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode) && st.st_size != 0 &&
        ::ftruncate(fileno(file_), 0) != 0)
      throw CommandError(kSetupFailed, fmt::format("--trace {}: {}", path_, ErrnoText(errno)));
    started_ = true;
    return file_;
  }

 private:
  void Forget() {
    if (created_) ::unlink(path_.c_str());
  }
  std::string path_;
  FILE* file_ = nullptr;
  bool created_ = false;
  bool started_ = false;
};

// The snapshot /sys is synthesized from: a file (--sysfs), the live host's (--sysfs-from-host),
// or none (the host's /sys behind the device view, or --sysfs-dir).
std::optional<sysfs::Snapshot> SysfsSnapshot(const RunOptions& options,
                                             const std::vector<harness::DeviceMapping>& devices,
                                             harness::Log& log) {
  if (options.sysfs_snapshot) {
    RequireNonEmpty("--sysfs", *options.sysfs_snapshot);
    return OrThrow(sysfs::LoadSnapshotFile(*options.sysfs_snapshot), "--sysfs");  // names the file
  }
  if (!options.sysfs_from_host) return std::nullopt;
  auto read = OrThrow(harness::SnapshotHostSysfs("/sys", devices), "--sysfs-from-host");
  for (const std::string& warning : read.warnings) log.Error("--sysfs-from-host: warning: {}", warning);
  return std::move(read.snapshot);
}

// Sets the harness up, runs the program and releases everything the run held (the device
// view's directory, the trace file) before returning the program's wait status.
int RunProgram(const RunOptions& options, harness::SignalForwarding& signals) {
  using namespace rxp::harness;
  std::optional<TraceFile> trace_file;
  if (!options.trace.empty() && options.trace != "-") trace_file.emplace(options.trace);
  // Lines of the set-up go to stderr only (the trace file has not started yet).
  Log log(stderr, options.trace == "-" ? stderr : nullptr);

  FactoryContext context;
  context.log = &log;
  context.tracer_issues = !options.app_issues_all;
  if (options.devices) RequireNonEmpty("--devices", *options.devices);
  if (options.policy) {
    RequireNonEmpty("--policy", *options.policy);
    context.policy_path = *options.policy;
    context.policy_text = ReadPolicy(*options.policy);
  }
  // Devices from sysfs, their driver ids (which every ioctl header must carry) from
  // NETLINK_RDMA; a host without RDMA netlink has no devices to proxy either.
  auto netlink = proxy::QueryHostRdmaDevices();
  const auto host_devices = WithDriverIds(OrThrow(DiscoverHostDevices()),
                                          netlink.ok() ? *netlink
                                                       : std::vector<proxy::HostRdmaDevice>{});
  context.devices = OrThrow(ParseDeviceList(options.devices.value_or(""), host_devices));

  DeviceViewOptions view_options;
  if (options.sysfs_dir) {
    RequireNonEmpty("--sysfs-dir", *options.sysfs_dir);
    RequirePath("--sysfs-dir", *options.sysfs_dir, /*directory=*/true);
    // The device view takes it as an absolute path: a relative one is the caller's.
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(*options.sysfs_dir, ec);
    if (ec)
      throw CommandError(kSetupFailed, fmt::format("--sysfs-dir {}: {}", *options.sysfs_dir,
                                                   ErrnoText(ec.value())));
    std::string dir = absolute.lexically_normal().string();
    if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    view_options.sysfs_dir = std::move(dir);
  }
  view_options.sysfs_snapshot = SysfsSnapshot(options, context.devices, log);
  const std::string sysfs_source = options.sysfs_snapshot
                                       ? "--sysfs " + *options.sysfs_snapshot
                                       : options.sysfs_from_host ? "--sysfs-from-host" : "";
  auto view = OrThrow(DeviceView::Create(context.devices, view_options), sysfs_source);
  if (trace_file) log.SetTrace(trace_file->Start());
  if (view_options.sysfs_snapshot) log.Trace("/sys: synthesized in {}/sys", view->root());
  RuleResolver resolver(view->rules());
  auto factory = MakeRunFactory(context);

  HarnessOptions harness;
  harness.argv = options.command;
  harness.range = OrThrow(FdRange::ForThisProcess());
  harness.resolver = &resolver;
  harness.factory = &factory->factory();
  harness.log = &log;
  harness.signals = &signals;
  harness.freeze_address_space = options.freeze_threads;
  harness.stop_poll = std::chrono::microseconds(options.stop_poll_us);
  harness.netlink_rdma =
      options.refuse_netlink ? NetlinkRdmaMode::kRefused : NetlinkRdmaMode::kFiltered;
  // The program's RDMA netlink device queries are answered about the allowed devices, under
  // their sandbox uverbs names (netlink_answer.h).
  auto netlink_devices = std::make_shared<std::vector<proxy::NetlinkDevice>>();
  for (const DeviceMapping& d : context.devices)
    netlink_devices->push_back({d.host.index, d.sandbox_uverbs});
  harness.netlink_devices = std::move(netlink_devices);
  auto run = OrThrow(RunHarness(harness));
  if (options.stats) try {
    const TracerStats& s = run.stats;
    fmt::print(stderr,
               "rdmaproxy: stops: seccomp {}, syscall-exit {}; injected {}; signals {}; "
               "paths rewritten {}, refused {}; fds moved {}; denied {}\n",
               s.seccomp_stops, s.exit_stops, s.injected_syscalls, s.signals_delivered,
               s.paths_rewritten, s.paths_failed, s.fds_moved, s.denied);
    if (s.waits.caught + s.waits.slept != 0)  // --stop-poll-us
      fmt::print(stderr, "rdmaproxy: waits for a stop: caught polling {}, slept {}\n",
                 s.waits.caught, s.waits.slept);
    if (s.freezes != 0)
      fmt::print(stderr,
                 "rdmaproxy: address-space freezes {} (tasks interrupted {}, stops held {}); "
                 "refused {}\n",
                 s.freezes, s.freeze_interrupts, s.held_stops, s.freeze_failures);
    if (s.foreign_trace_stops != 0)
      fmt::print(stderr, "rdmaproxy: stops the program's own seccomp filters asked for: {} (ENOSYS)\n",
                 s.foreign_trace_stops);
    if (s.tasks_left_over != 0)  // a model error (TracerStats): worth a bug report
      fmt::print(stderr, "rdmaproxy: tasks tracked but never seen to end: {}\n",
                 s.tasks_left_over);
    factory->PrintStats(stderr);
  } catch (const std::system_error&) {
    // fmt could not write (stderr closed: EPIPE): the program's status is what matters.
  }
  return run.wait_status;
}

int Run(const RunOptions& options) {
  // Forwarding starts before the set-up: a signal that comes while /sys is rendered still
  // leads to the clean-up below (RunHarness then reports the program as killed by it).
  harness::SignalForwarding signals;
  const int wait_status = RunProgram(options, signals);
  harness::TerminateLike(wait_status);
  return harness::ExitCodeOf(wait_status);
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
                "Print one line per intercepted call, to stderr or (--trace=FILE) to FILE")
      ->option_text("[=FILE]");
  // No CLI11 existence checks on --policy / --sysfs-dir: a missing file is a setup failure
  // (status 2, one line naming the errno), not a usage error (CLI11's 105).
  run->add_option("--policy", options->policy, "Policy file for the proxy engine");
  auto* sysfs = run->add_option("--sysfs", options->sysfs_snapshot,
                                "Serve /sys synthesized from this host snapshot (rdmaproxy sysfs "
                                "snapshot), narrowed to the allowed devices");
  auto* from_host = run->add_flag("--sysfs-from-host", options->sysfs_from_host,
                                  "Serve /sys synthesized from a snapshot of the live host /sys "
                                  "taken at start, narrowed to the allowed devices");
  auto* dir = run->add_option("--sysfs-dir", options->sysfs_dir,
                              "Serve /sys from this rendered directory instead of the host's");
  sysfs->excludes(from_host, dir);
  from_host->excludes(dir);
  run->add_flag("--stats", options->stats, "Print stop and call counters when the program ends");
  run->add_flag("--freeze-threads,!--no-freeze-threads", options->freeze_threads,
                "Hold the program's other threads stopped while the kernel reads a validated "
                "ioctl image, and while a device it opens or copies is not yet in the reserved "
                "fd range (the default: closes those other-thread races; restarts their "
                "blocked syscalls). --no-freeze-threads leaves them running");
  run->add_flag("--app-issues-all", options->app_issues_all,
                "Run every verbs ioctl and rxe's send doorbell write as the program's own "
                "syscall (two stops each) instead of issuing those that need nothing of the "
                "program's context from the tracer");
  run->add_flag("--refuse-netlink", options->refuse_netlink,
                "Refuse NETLINK_RDMA sockets (EPROTONOSUPPORT, as on a kernel without RDMA "
                "netlink) instead of giving the program its own socket whose requests are "
                "filtered (RDMA_NLDEV_CMD_SYS_GET, the copy-on-fork answer, reaches the kernel; "
                "the device list, port and uverbs queries are answered about the allowed "
                "devices; every other request gets EINVAL)");
  run->add_option("--stop-poll-us", options->stop_poll_us,
                  "Poll up to this many microseconds for the program's next stop before "
                  "sleeping in waitpid (adaptive; never on one CPU). Faster stops for one "
                  "proxied program with idle CPUs beside it; slower when polling tracers "
                  "outnumber the CPUs. 0 (the default): always sleep")
      ->capture_default_str()
      ->check(CLI::Range(0u, 100000u));
  run->add_option("command", options->command, "The program and its arguments (after --)")
      ->required();
  RegisterRunner(run, [options] { return Run(*options); });
}

}  // namespace rxp::tools
