// StopWaiter: waitpid(2) for a tracee's next ptrace stop, polling for a short while before
// sleeping.
//
// Why: a tracer that sleeps in waitpid is woken by the tracee's stop (do_notify_parent_cldstop),
// and the tracee by the tracer's PTRACE_CONT (ptrace_resume -> wake_up_state): each round trip
// wakes an idle CPU twice. Where waking an idle CPU is dear, that is most of the round trip:
// under qemu TCG (the test bed) a bare ptrace round trip costs ~80-170 us with the tracer
// asleep and ~20-50 us with it polling (build/tests/bench/rxp_stop_floor prints both). A tracer
// that polls with WNOHANG keeps its CPU awake and sees the stop without being woken.
//
// The price is the tracer's CPU time while it polls, so the poll is bounded and adaptive: the
// window starts at `limit`; a wait that ends within the window sets it back to `limit` (the
// program is in a run of proxied calls), a wait that had to sleep for longer than 4 windows
// halves it, down to limit/16, so a program that computes between its proxied calls costs the
// tracer at most a sixteenth of `limit` per stop. Between polls the tracer yields its CPU to any
// runnable task there. Polling is off when the tracer may run on one CPU only: there it would
// hold the CPU the tracee needs to reach its next stop. It is opt-in (`rdmaproxy run
// --stop-poll-us`): where polling tracers and their tracees outnumber the CPUs (two proxied
// perftest peers on a 2-CPU guest), they slow each other down (docs/harness.md).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

namespace rxp::harness {

class StopWaiter {
 public:
  struct Stats {
    uint64_t caught = 0;  // waits that ended while polling
    uint64_t slept = 0;   // waits that went to sleep in waitpid
  };

  // `limit` 0: never poll (a plain blocking waitpid).
  explicit StopWaiter(std::chrono::microseconds limit);

  // waitpid(pid, status, __WALL): the same results, errno included (EINTR is retried).
  pid_t Wait(pid_t pid, int* status);

  bool polling() const { return limit_ns_ > 0; }
  std::chrono::nanoseconds window() const { return std::chrono::nanoseconds(window_ns_); }
  const Stats& stats() const { return stats_; }

 private:
  int64_t limit_ns_;   // 0: polling off
  int64_t window_ns_;  // the current poll window, limit/16 .. limit
  Stats stats_;
};

// Whether this thread may run on more than one CPU (sched_getaffinity).
bool MayUseSeveralCpus();

}  // namespace rxp::harness
