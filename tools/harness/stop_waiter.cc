#include "tools/harness/stop_waiter.h"

#include <sched.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

namespace rxp::harness {
namespace {

int64_t NowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);  // vDSO: no syscall, no sleep
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

pid_t BlockingWait(pid_t pid, int* status) {
  pid_t got;
  do {
    got = waitpid(pid, status, __WALL);
  } while (got < 0 && errno == EINTR);
  return got;
}

}  // namespace

bool MayUseSeveralCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  return CPU_COUNT(&set) > 1;
}

StopWaiter::StopWaiter(std::chrono::microseconds limit)
    : limit_ns_(limit.count() > 0 && MayUseSeveralCpus()
                    ? std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count()
                    : 0),
      window_ns_(limit_ns_) {}

pid_t StopWaiter::Wait(pid_t pid, int* status) {
  if (limit_ns_ == 0) return BlockingWait(pid, status);
  const int64_t start = NowNs();
  const int64_t floor = limit_ns_ / 16;
  for (;;) {
    const pid_t got = waitpid(pid, status, __WALL | WNOHANG);
    if (got != 0) {
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        ++stats_.caught;
        window_ns_ = limit_ns_;  // quick stops: keep polling the full window
      }
      return got;  // a stop, or an error (ECHILD...) that sleeping would not change
    }
    if (NowNs() - start >= window_ns_) break;
    sched_yield();  // a runnable task on this CPU (the tracee itself, perhaps) goes first
  }
  ++stats_.slept;
  const pid_t got = BlockingWait(pid, status);
  // Only a wait much longer than the window says the program is doing something else than
  // proxied calls; one just past the window is a slow stop, and polling still pays.
  if (got > 0 && NowNs() - start > 4 * window_ns_) window_ns_ = std::max(floor, window_ns_ / 2);
  return got;
}

}  // namespace rxp::harness
