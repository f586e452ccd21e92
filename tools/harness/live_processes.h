// LiveProcesses: the traced processes alive now, readable from a signal handler. Once the
// first program is gone the harness waits for the rest of its tree (like `strace -f`); a
// SIGTERM sent to the harness then goes to those processes, so that a daemonizing launcher
// run under the proxy can still be stopped without SIGKILL (which would leave the device
// view's directory behind).
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>

namespace rxp::harness {

class LiveProcesses {
 public:
  // A few thousand processes at once; more are not tracked (a signal then misses those).
  static constexpr size_t kSlots = 4096;

  // The tracer's thread only.
  void Add(pid_t tgid) {
    for (auto& slot : slots_) {
      pid_t empty = 0;
      if (slot.compare_exchange_strong(empty, tgid)) return;
    }
  }
  void Remove(pid_t tgid) {
    for (auto& slot : slots_) {
      pid_t expected = tgid;
      if (slot.compare_exchange_strong(expected, 0)) return;
    }
  }
  void Clear() {
    for (auto& slot : slots_) slot.store(0);
  }

  // Async-signal-safe: atomics only.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& slot : slots_)
      if (const pid_t pid = slot.load(); pid > 0) f(pid);
  }

 private:
  std::array<std::atomic<pid_t>, kSlots> slots_{};
};

}  // namespace rxp::harness
