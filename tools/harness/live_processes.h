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

  // The tracer's thread only. Scans stop at the high-water mark (the slots ever used), so a
  // tree of a few processes costs a few loads per call, not kSlots compare-and-swaps.
  void Add(pid_t tgid) {
    const size_t used = used_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < used; ++i)
      if (slots_[i].load(std::memory_order_relaxed) == 0) {
        slots_[i].store(tgid);
        return;
      }
    if (used == kSlots) return;
    slots_[used].store(tgid);
    // Published after the slot: a handler that sees the mark sees the pid.
    used_.store(used + 1);
  }
  void Remove(pid_t tgid) {
    const size_t used = used_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < used; ++i)
      if (slots_[i].load(std::memory_order_relaxed) == tgid) {
        slots_[i].store(0);
        return;
      }
  }
  void Clear() {
    const size_t used = used_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < used; ++i) slots_[i].store(0);
  }

  // Async-signal-safe: atomics only.
  template <typename F>
  void ForEach(F&& f) const {
    const size_t used = used_.load();
    for (size_t i = 0; i < used; ++i)
      if (const pid_t pid = slots_[i].load(); pid > 0) f(pid);
  }

 private:
  std::array<std::atomic<pid_t>, kSlots> slots_{};
  std::atomic<size_t> used_{0};  // slots_[0, used_) have been used
};

}  // namespace rxp::harness
