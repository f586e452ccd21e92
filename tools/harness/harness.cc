#include "tools/harness/harness.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "tools/harness/intercept_rules.h"
#include "tools/harness/launcher.h"

namespace rxp::harness {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<pid_t> g_forward_to{0};
std::atomic<int> g_pending{0};  // a signal that came while no program was running

// Async-signal-safe: only atomics and kill(2). Once the program runs, signals from the kernel
// (si_code > 0: a terminal's ^C goes to the whole foreground process group, which already
// includes the tracee) are not repeated. Before, every signal is kept; if the launch finished
// meanwhile, whichever of this handler and ForwardTo takes the kept signal first delivers it.
void ForwardSignal(int sig, siginfo_t* info, void*) {
  if (const pid_t target = g_forward_to.load(); target > 0) {
    if (info != nullptr && info->si_code <= 0) kill(target, sig);
    return;
  }
  g_pending.store(sig);
  if (const pid_t target = g_forward_to.load(); target > 0 && g_pending.exchange(0) != 0)
    kill(target, sig);
}

}  // namespace

SignalForwarding::SignalForwarding() {
  static_assert(std::size(kForwarded) == std::size(decltype(old_){}));
  g_forward_to.store(0);
  g_pending.store(0);
  struct sigaction action{};
  action.sa_sigaction = ForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    sigaction(kForwarded[i], nullptr, &old_[i]);
    // An ignored signal stays ignored: the program inherits SIG_IGN across exec (a job
    // started with nohup or in the background expects that), and nothing is forwarded.
    if (old_[i].sa_handler == SIG_IGN) continue;
    sigaction(kForwarded[i], &action, nullptr);
  }
}

SignalForwarding::~SignalForwarding() {
  for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old_[i], nullptr);
  g_forward_to.store(0);
  g_pending.store(0);
}

void SignalForwarding::StopForwarding() { g_forward_to.store(0); }

int SignalForwarding::TakePending() { return g_pending.exchange(0); }

void SignalForwarding::ForwardTo(pid_t pid) {
  g_forward_to.store(pid);
  if (const int sig = g_pending.exchange(0); sig != 0) kill(pid, sig);
}

Result<HarnessRun> RunHarness(const HarnessOptions& options) {
  if (options.argv.empty()) return Fail(EINVAL, "no program to run");
  auto program = FindProgram(options.argv[0]);
  if (!program.ok()) {
    // Not found in PATH: the line and the status a shell gives ("command not found", 127),
    // so a script tells it from a program that ran and failed.
    if (program.error().errnum != ENOENT) return std::move(program).error();
    Log fallback;
    (options.log != nullptr ? *options.log : fallback).Error("{}", program.error().reason);
    return HarnessRun{W_EXITCODE(127, 0), {}};
  }
  std::optional<ScratchWindow> scratch_window;
  if (options.scratch_guard == HarnessOptions::ScratchGuard::kWindow || !KernelSealsMappings())
    scratch_window = ScratchWindow{LowScratchBase()};
  auto filter = CompileFilter(BuildBaseRules(options.range, options.netlink_rdma, scratch_window));
  if (!filter.ok()) return std::move(filter).error();
  auto device_filter = CompileFilter(BuildDeviceRules(options.range));
  if (!device_filter.ok()) return std::move(device_filter).error();

  TracerOptions tracer_options;
  tracer_options.range = options.range;
  tracer_options.base_filter = &*filter;
  tracer_options.device_filter = &*device_filter;
  tracer_options.scratch_window = scratch_window;
  tracer_options.resolver = options.resolver;
  tracer_options.factory = options.factory;
  tracer_options.host_fs = options.host_fs;
  tracer_options.log = options.log;
  tracer_options.trust_clone_events = options.trust_clone_events;
  tracer_options.freeze_timeout = options.freeze_timeout;
  tracer_options.freeze_address_space = options.freeze_address_space;
  tracer_options.stop_poll = options.stop_poll;
  Tracer tracer(tracer_options);

  // The handlers are in place before the fork: the child inherits the harness's own signal
  // dispositions only until exec, which resets caught signals to SIG_DFL (execve(2)).
  std::optional<SignalForwarding> own_signals;
  SignalForwarding* signals = options.signals;
  if (signals == nullptr && options.forward_signals) signals = &own_signals.emplace();
  if (signals != nullptr) {
    if (const int sig = signals->TakePending(); sig != 0) return HarnessRun{W_EXITCODE(0, sig), {}};
  }
  auto launched = LaunchTraced(*program, options.argv, *filter);
  if (!launched.ok()) return std::move(launched).error();
  if (signals != nullptr) signals->ForwardTo(launched->pid);
  if (launched->exec_error) {
    Log fallback;
    (options.log != nullptr ? *options.log : fallback).Error("{}", launched->exec_error->reason);
  }
  auto status = tracer.Run(launched->pid);
  if (signals != nullptr) signals->StopForwarding();
  if (!status.ok()) return std::move(status).error();
  return HarnessRun{*status, tracer.stats()};
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

void TerminateLike(int wait_status) {
  if (!WIFSIGNALED(wait_status)) return;
  const int sig = WTERMSIG(wait_status);
  struct rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

}  // namespace rxp::harness
