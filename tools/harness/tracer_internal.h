// Tracer internals shared by tracer.cc, tracer_fd.cc and tracer_path.cc: the per-stop helpers
// a handler or a dispatcher uses. Not part of the harness's interface.
#pragma once

#include <optional>

#include "tools/harness/tracee_memory.h"
#include "tools/harness/tracer.h"

namespace rxp::harness {

// A tracee fd's file status flags, from /proc/<tid>/fdinfo/<fd> ("flags:\t02100002", octal;
// proc(5)): the access mode, O_CLOEXEC, ... Nullopt when unreadable (tracer_fd.cc).
std::optional<unsigned long> TraceeFdFlags(pid_t tid, long fd);

// Runs `probe` in a forked child of the harness and says whether it returned true; a child
// that dies (a filter the harness inherited may kill the probed call) says no. Async-signal-
// safe calls only in `probe`. The tracer is not waiting at that moment: the child is reaped
// here, by pid.
bool SucceedsInChild(bool (*probe)());

// What a seccomp(2) / prctl(PR_SET_SECCOMP) stop (Intercept::kSeccompFilter) asks for.
enum class SeccompRequest {
  kStrict,     // SECCOMP_MODE_STRICT
  kOtherMode,  // prctl with a mode neither strict nor filter: the kernel's EINVAL
  kListener,   // a filter with SECCOMP_FILTER_FLAG_NEW_LISTENER
  kFilter,     // a filter
};
SeccompRequest ClassifySeccomp(long nr, const std::array<uint64_t, 6>& args);

// A syscall-exit stop being finished: it can inject syscalls (the thread is at an exit stop,
// so SyscallInjector rewinds onto the `syscall` instruction) and remembers whether it did.
class Tracer::ExitStop {
 public:
  ExitStop(Tracer& tracer, Task& task, const Regs& regs) : tracer_(tracer), task_(task), regs_(regs) {}

  Tracer& tracer() { return tracer_; }
  Task& task() { return task_; }
  const Regs& regs() const { return regs_; }

  // Runs one syscall in the thread; its raw result (-errno on failure).
  Result<long> Inject(long nr, const std::array<uint64_t, 6>& args) {
    if (!injector_) injector_.emplace(task_.tid, regs_, SyscallInjector::At::kExitStop,
                                      &task_.deferred_signals, tracer_.waiter_);
    touched_ = true;
    ++tracer_.stats_.injected_syscalls;
    return injector_->Run(nr, args);
  }

  // The registers are no longer the syscall's own: the caller must install the final ones.
  bool touched() const { return touched_; }
  // The thread died during an injection (its wait status), and must not be touched again.
  std::optional<int> death_status() const {
    return injector_ ? injector_->death_status() : std::nullopt;
  }

 private:
  Tracer& tracer_;
  Task& task_;
  Regs regs_;
  std::optional<SyscallInjector> injector_;
  bool touched_ = false;
};

// The TraceeAccess a handler gets: at entry (exit == nullptr) or at exit.
class Tracer::Access final : public TraceeAccess {
 public:
  Access(Tracer& tracer, Task& task, ExitStop* exit)
      : tracer_(tracer), task_(task), exit_(exit), memory_(task.tid, &task.mm->mem_fd()) {}

  TraceeMemory& memory() override { return memory_; }
  Result<uint64_t> Scratch(size_t size) override;
  Result<uint64_t> KernelScratch(size_t size) override;
  std::optional<std::pair<uint64_t, uint64_t>> ScratchRegion() override;
  ProxiedFileHandler* HandlerOf(int fd) override;
  Result<int> AdoptFd(int fd, std::unique_ptr<ProxiedFileHandler> handler,
                      std::string label) override;

  bool used_scratch() const { return used_scratch_; }
  ProcessMemory& process_memory() { return memory_; }

 private:
  Tracer& tracer_;
  Task& task_;
  ExitStop* exit_;
  ProcessMemory memory_;
  bool used_scratch_ = false;
};

}  // namespace rxp::harness
