#include "tools/harness/harness.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "tools/harness/intercept_rules.h"
#include "tools/harness/launcher.h"

namespace rxp::harness {
namespace {

// Every signal whose default action ends a process and that a process can catch, except the
// ones raised for the process's own fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT,
// and SIGSYS, which a seccomp filter above the harness raises for its own syscall): sent to
// the harness, it is meant for the program the harness stands for. Left to its default, one
// would kill the harness, and with it (PTRACE_O_EXITKILL) the program, whatever the program
// does with that signal (a `trap "" QUIT`, a SIGUSR1 handler).
bool Forwarded(int sig) {
  switch (sig) {
    case SIGHUP: case SIGINT: case SIGQUIT: case SIGUSR1: case SIGUSR2: case SIGPIPE:
    case SIGALRM: case SIGTERM: case SIGSTKFLT: case SIGXCPU: case SIGXFSZ: case SIGVTALRM:
    case SIGPROF: case SIGIO: case SIGPWR:
      return true;
    default:
      return sig >= SIGRTMIN && sig <= SIGRTMAX;
  }
}

// The job-control signals: the stop signals a process can catch, and SIGCONT. Sent to the
// harness with kill(2), they are meant for the program too: `kill -TSTP` stops the program,
// and then the harness, so that whoever waits for the harness sees a stopped job, as it would
// see the program natively (what sudo(8) does for its command); `kill -CONT` continues both.
bool JobControl(int sig) {
  return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT;
}

// The signals SignalForwarding installs its handler for.
bool Handled(int sig) { return Forwarded(sig) || JobControl(sig); }

// Where a signal goes: 0 none yet (kept in g_pending), > 0 the first program, kToTree the
// traced processes left once the first program is gone (g_live).
constexpr pid_t kToTree = -1;
std::atomic<pid_t> g_forward_to{0};
// The signals that came while no program was running, one bit each (bit sig - 1): two
// different ones (a SIGTERM, then a SIGUSR1 during the launch) are both kept.
std::atomic<uint64_t> g_pending{0};
uint64_t Bit(int sig) { return uint64_t{1} << (sig - 1); }

// Async-signal-safe: sends every signal in `kept` to `target`, lowest number first.
void SendKept(pid_t target, uint64_t kept) {
  for (int sig = 1; kept != 0; ++sig, kept >>= 1)
    if ((kept & 1) != 0) kill(target, sig);
}
LiveProcesses g_live;
// A stop signal was forwarded to the program: the harness stops once the program has.
std::atomic<bool> g_stop_with_program{false};

// Sends `sig` where signals go now (nowhere before the launch).
void SendOn(int sig) {
  if (const pid_t target = g_forward_to.load(); target > 0)
    kill(target, sig);
  else if (target == kToTree)
    g_live.ForEach([sig](pid_t pid) { kill(pid, sig); });
}

// Async-signal-safe, as ForwardSignal. SIGCONT continues the harness whatever its handler
// (prepare_signal), and is passed on. A stop signal from kill(2), once the program runs, goes
// to it alone; the harness stops itself when the program has stopped (ProgramStopped). Any
// other -- from the terminal (^Z, a background read or write: the whole process group, the
// program included, has it), or before the launch, or after the first program -- stops the
// harness at once, as the default action would.
void ForwardJobControl(int sig, siginfo_t* info) {
  if (sig == SIGCONT) {
    SendOn(SIGCONT);
    return;
  }
  if (const pid_t target = g_forward_to.load();
      target > 0 && info != nullptr && info->si_code <= 0) {
    g_stop_with_program.store(true);
    kill(target, sig);
    return;
  }
  kill(getpid(), SIGSTOP);
}

// Async-signal-safe: only atomics, getpid(2) and kill(2). Once the program runs, signals from
// the kernel (si_code > 0: a terminal's ^C goes to the whole foreground process group, which
// already includes the tracee) are not repeated, nor is one the harness caused itself (a
// SIGPIPE from writing its log to a closed pipe: the write fails with EPIPE instead). Before,
// every signal is kept.
void ForwardSignal(int sig, siginfo_t* info, void*) {
  if (JobControl(sig)) {
    ForwardJobControl(sig, info);
    return;
  }
  // pipe_write's SIGPIPE is SI_USER from the writer itself (send_sig with SEND_SIG_NOINFO).
  const bool own_epipe = sig == SIGPIPE && info != nullptr && info->si_code == SI_USER &&
                         info->si_pid == getpid();
  if (own_epipe) return;
  if (const pid_t target = g_forward_to.load(); target > 0 || target == kToTree) {
    if (info != nullptr && info->si_code > 0) return;
    SendOn(sig);
    return;
  }
  // Kept with any other; if the launch finished meanwhile, whichever of this handler (or a
  // nested one) and ForwardTo empties the set first sends what it held.
  g_pending.fetch_or(Bit(sig));
  if (const pid_t target = g_forward_to.load(); target > 0) SendKept(target, g_pending.exchange(0));
}

}  // namespace

SignalForwarding::SignalForwarding() {
  g_forward_to.store(0);
  g_pending.store(0);
  g_live.Clear();
  struct sigaction action{};
  action.sa_sigaction = ForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  g_stop_with_program.store(false);
  for (int sig = 1; sig < static_cast<int>(old_.size()); ++sig) {
    if (!Handled(sig)) continue;
    sigaction(sig, nullptr, &old_[static_cast<size_t>(sig)]);
    // An ignored signal stays ignored: the program inherits SIG_IGN across exec (a job
    // started with nohup or in the background expects that), and nothing is forwarded.
    if (old_[static_cast<size_t>(sig)].sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
}

SignalForwarding::~SignalForwarding() {
  for (int sig = 1; sig < static_cast<int>(old_.size()); ++sig)
    if (Handled(sig)) sigaction(sig, &old_[static_cast<size_t>(sig)], nullptr);
  g_forward_to.store(0);
  g_pending.store(0);
  g_live.Clear();
}

void SignalForwarding::StopForwarding() { g_forward_to.store(0); }

void SignalForwarding::ForwardToTree() { g_forward_to.store(kToTree); }

LiveProcesses& SignalForwarding::live() { return g_live; }

int SignalForwarding::TakePending() {
  const uint64_t kept = g_pending.exchange(0);
  return kept == 0 ? 0 : std::countr_zero(kept) + 1;
}

void SignalForwarding::ProgramStopped() {
  if (g_stop_with_program.exchange(false)) kill(getpid(), SIGSTOP);
}

void SignalForwarding::ForwardTo(pid_t pid) {
  g_forward_to.store(pid);
  SendKept(pid, g_pending.exchange(0));
}

Result<HarnessRun> RunHarness(const HarnessOptions& options) {
  if (options.argv.empty()) return Fail(EINVAL, "no program to run");
  auto program = FindProgram(options.argv[0]);
  if (!program.ok()) {
    // Not found in PATH: the line and the status a shell gives ("command not found", 127; a
    // match that cannot be run, 126), so a script tells it from a program that ran and failed.
    const int errnum = program.error().errnum;
    if (errnum != ENOENT && errnum != EACCES) return std::move(program).error();
    Log fallback;
    (options.log != nullptr ? *options.log : fallback).Error("{}", program.error().reason);
    return HarnessRun{W_EXITCODE(errnum == ENOENT ? 127 : 126, 0), {}};
  }
  // Every region at the fixed window, guarded by the base filter; or sealed where it can be,
  // and at the window, guarded by a filter of its own, in a process with seccomp filters of
  // its own (tracer_inject.cc, EnsureScratch).
  const ScratchWindow scratch_window{LowScratchBase()};
  const bool seal = options.scratch_guard != HarnessOptions::ScratchGuard::kWindow &&
                    KernelSealsMappings();
  auto filter = CompileFilter(BuildBaseRules(options.range, options.netlink_rdma,
                                             seal ? std::nullopt
                                                  : std::optional<ScratchWindow>(scratch_window)));
  if (!filter.ok()) return std::move(filter).error();
  auto device_filter = CompileFilter(BuildDeviceRules(options.range));
  if (!device_filter.ok()) return std::move(device_filter).error();
  auto guard_filter = CompileFilter(BuildGuardRules(scratch_window));
  if (!guard_filter.ok()) return std::move(guard_filter).error();
  auto nofile_filter = CompileFilter(BuildNofileQueryRules());
  if (!nofile_filter.ok()) return std::move(nofile_filter).error();

  TracerOptions tracer_options;
  tracer_options.range = options.range;
  tracer_options.base_filter = &*filter;
  tracer_options.device_filter = &*device_filter;
  tracer_options.scratch_window = scratch_window;
  tracer_options.seal_scratch = seal;
  tracer_options.guard_filter = seal ? &*guard_filter : nullptr;
  tracer_options.nofile_filter = &*nofile_filter;
  tracer_options.resolver = options.resolver;
  tracer_options.factory = options.factory;
  tracer_options.host_fs = options.host_fs;
  tracer_options.log = options.log;
  tracer_options.trust_clone_events = options.trust_clone_events;
  tracer_options.hold_creator_events = options.hold_creator_events;
  tracer_options.freeze_timeout = options.freeze_timeout;
  tracer_options.freeze_address_space = options.freeze_address_space;
  tracer_options.stop_poll = options.stop_poll;
  tracer_options.netlink_devices = options.netlink_devices;
  // The handlers are in place before the fork: the child inherits the harness's own signal
  // dispositions only until exec, which resets caught signals to SIG_DFL (execve(2)).
  std::optional<SignalForwarding> own_signals;
  SignalForwarding* signals = options.signals;
  if (signals == nullptr && options.forward_signals) signals = &own_signals.emplace();
  // Signals sent to the harness after the first program is gone go to what is left of its
  // tree (the harness waits for it), never to a pid the kernel may have given someone else.
  if (signals != nullptr) {
    tracer_options.live = &SignalForwarding::live();
    tracer_options.on_first_gone = [signals] { signals->ForwardToTree(); };
    tracer_options.on_first_stopped = [signals] { signals->ProgramStopped(); };
  }
  Tracer tracer(tracer_options);

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
