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

#include <string>
#include <vector>

#include "abi/result.h"
#include "tools/harness/fd_range.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"
#include "tools/harness/path_canon.h"
#include "tools/harness/path_resolver.h"
#include "tools/harness/tracer.h"

namespace rxp::harness {

struct HarnessOptions {
  std::vector<std::string> argv;         // the program and its arguments (argv[0] via PATH)
  FdRange range = *FdRange::Make(768, 256);
  const PathResolver* resolver = nullptr;
  FileHandlerFactory* factory = nullptr;
  Log* log = nullptr;
  HostFs* host_fs = nullptr;
  // SIGINT, SIGTERM and SIGHUP sent to the harness by kill(2) (not by the terminal, which
  // signals the whole foreground process group, tracee included) go to the traced program.
  bool forward_signals = true;
  bool trust_clone_events = true;  // TracerOptions::trust_clone_events (tests)
};

struct HarnessRun {
  int wait_status = 0;  // of the traced program (the first process), as waitpid reports it
  TracerStats stats;
};

// Errors: the program cannot be found, ptrace is not permitted, the filter cannot be built.
// A program that cannot be executed after the fork is a successful run with status 127.
Result<HarnessRun> RunHarness(const HarnessOptions& options);

// The shell convention: the exit code, or 128 + the signal number.
int ExitCodeOf(int wait_status);

// Ends the harness the way the traced program ended: exit with its code, or die of its signal
// (with core dumps off, so the harness never leaves a core of its own). Returns only if the
// signal did not kill (then the caller exits with ExitCodeOf).
void TerminateLike(int wait_status);

}  // namespace rxp::harness
