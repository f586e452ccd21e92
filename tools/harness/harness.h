// The harness in one call: build the filter, launch the program traced, run the event loop,
// forward termination signals, and report the program's wait status.
//
//   rxp::harness::HarnessOptions options;
//   options.argv = {"ibv_devinfo", "-v"};
//   options.range = *rxp::harness::FdRange::ForThisProcess();
//   options.resolver = &resolver;   // path redirection (device_view.h builds one)
//   options.factory = &factory;     // the proxied-file handlers (handler.h)
//   auto run = rxp::harness::RunHarness(options);
//   return rxp::harness::ExitCodeOf(run->wait_status);
#pragma once

#include <signal.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "abi/result.h"
#include "rdmaproxy/netlink_answer.h"
#include "tools/harness/fd_range.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"
#include "tools/harness/intercept_rules.h"
#include "tools/harness/path_canon.h"
#include "tools/harness/path_resolver.h"
#include "tools/harness/tracer.h"

namespace rxp::harness {

// Forwards the signals sent to the harness with kill(2) -- every catchable one whose default
// action ends a process, except those of a process's own faults: SIGINT, SIGTERM, SIGHUP, SIGQUIT,
// SIGUSR1/2, SIGALRM, SIGPIPE, the real-time signals, ... -- to the traced program, for as long
// as it lives, then to what is left of its tree (a terminal's ^C already reaches the whole
// foreground process group, the program included, and is not repeated; a SIGPIPE the harness
// causes itself is not forwarded, its write fails with EPIPE). Made before the caller's own set-up (rendering a
// /sys tree), it also covers the time before the program exists: a signal then -- a
// terminal's too -- is kept, RunHarness does not start the program and reports it killed by
// that signal, and the caller releases what it made and ends like the signal (TerminateLike).
// The job-control signals are passed on too: SIGTSTP/SIGTTIN/SIGTTOU from kill(2) stop the
// program, then the harness; SIGCONT continues it (ForwardJobControl in harness.cc).
// An ignored signal stays ignored. One instance at a time (the handlers are process-wide); the
// old handlers come back when it is destroyed.
class SignalForwarding {
 public:
  SignalForwarding();
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  // The lowest-numbered signal kept while no program was running (0: none); none is kept
  // any more.
  int TakePending();
  // From now on signals go to `pid`; those kept since the last TakePending are sent to it now.
  void ForwardTo(pid_t pid);
  // The program is gone (and reaped: its pid may be reused): signals are kept again, so one
  // that comes while the caller cleans up no longer kills it half-way.
  void StopForwarding();
  // The first program is on its way out (every thread of it has reported PTRACE_EVENT_EXIT,
  // TracerOptions::on_first_gone) or reaped: signals go to the traced processes still alive.
  void ForwardToTree();
  // The first program entered a group-stop: if a stop signal sent to the harness was passed
  // on to it, the harness stops too (SIGSTOP), until a SIGCONT continues both.
  void ProgramStopped();
  // The traced processes alive, as the tracer keeps them (TracerOptions::live).
  static LiveProcesses& live();

 private:
  std::array<struct sigaction, 65> old_{};  // by signal number (_NSIG is 65)
};

struct HarnessOptions {
  std::vector<std::string> argv;         // the program and its arguments (argv[0] via PATH)
  FdRange range = *FdRange::Make(768, 256);
  const PathResolver* resolver = nullptr;
  FileHandlerFactory* factory = nullptr;
  Log* log = nullptr;
  HostFs* host_fs = nullptr;
  // Signals (SignalForwarding's) sent to the harness by kill(2) (not by the terminal, which
  // signals the whole foreground process group, tracee included) go to the traced program:
  // through `signals` when the caller made one before its set-up, else through one RunHarness
  // makes for the run (unless forward_signals is false).
  SignalForwarding* signals = nullptr;
  bool forward_signals = true;
  bool trust_clone_events = true;  // TracerOptions::trust_clone_events (tests)
  bool hold_creator_events = false;  // TracerOptions::hold_creator_events (tests)
  std::chrono::milliseconds freeze_timeout{5000};  // TracerOptions::freeze_timeout
  bool freeze_address_space = true;                 // TracerOptions::freeze_address_space
  std::chrono::microseconds stop_poll{0};           // TracerOptions::stop_poll
  NetlinkRdmaMode netlink_rdma = NetlinkRdmaMode::kFiltered;  // --refuse-netlink: kRefused
  std::shared_ptr<const std::vector<proxy::NetlinkDevice>> netlink_devices;  // TracerOptions's
  // How the scratch region's read-only half is kept read-only (docs/harness.md, "The scratch
  // region"): kAuto seals it where the kernel has mseal(2) and uses the fixed window and its
  // filter rules elsewhere; kWindow uses the window on any kernel (tests).
  enum class ScratchGuard { kAuto, kWindow };
  ScratchGuard scratch_guard = ScratchGuard::kAuto;
};

struct HarnessRun {
  int wait_status = 0;  // of the traced program (the first process), as waitpid reports it
  TracerStats stats;
};

// Errors: ptrace is not permitted, the filter cannot be built. A program that is not found in
// PATH, or cannot be executed after the fork, is a successful run with the status a shell
// gives: 127 for no such file, 126 for one that cannot be run (and a log line). A
// forwarded signal that came before the launch is a successful run that did not start the
// program: its wait status says "killed by that signal".
Result<HarnessRun> RunHarness(const HarnessOptions& options);

// The shell convention: the exit code, or 128 + the signal number.
int ExitCodeOf(int wait_status);

// Ends the harness the way the traced program ended: exit with its code, or die of its signal
// (with core dumps off, so the harness never leaves a core of its own). Returns only if the
// signal did not kill (then the caller exits with ExitCodeOf).
void TerminateLike(int wait_status);

}  // namespace rxp::harness
