// The engine-facing seam of the harness: what runs when a tracee touches a proxied file.
//
// The harness (tracer.h) stops a tracee only for syscalls that name a proxied fd — every fd a
// FileHandlerFactory accepted at open time lives in the reserved range (fd_range.h) — plus
// RDMA_VERBS_IOCTL on any fd. For each such stop it calls the ProxiedFileHandler of that open
// file:
//
//   OnEntry(call, tracee)          before the syscall runs: Allow / AllowAndInspect / Deny /
//                                  Emulate, optionally with rewritten argument registers
//   OnExit(call, result, tracee)   after it ran, when OnEntry asked (AllowAndInspect or WithArg)
//   OnClose(reason)                the last fd on this open file is gone in every tracee
//
// One handler serves one open file description, not one fd: dup/dup2/dup3/F_DUPFD copies and
// fork/clone inheritance share it (the harness refcounts the description across fd tables, as
// the kernel does), so calls may come from several fds, threads and processes; SyscallView says
// which. Handlers are called on the tracer thread, one at a time; they must not block.
//
// The engine plugs in by implementing FileHandlerFactory and handing it to the harness
// (HarnessOptions::factory in harness.h; `rdmaproxy run` builds it in
// tools/handler_factory.cc). TraceeAccess::memory() is what the engine wraps as its AppMemory.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "abi/result.h"
#include "tools/harness/tracee_memory.h"

namespace rxp::harness {

// One intercepted syscall as the handler sees it. Arguments are the raw registers; `fd` is the
// proxied fd the call names (low 32 bits of args[0], or of args[4] for mmap).
struct SyscallView {
  pid_t tid = 0;   // calling thread
  pid_t tgid = 0;  // its process
  long nr = -1;    // x86-64 syscall number (SYS_ioctl, SYS_write, ...)
  std::array<uint64_t, 6> args{};
  int fd = -1;
  // The calling thread's credentials: equal to another call's or an opener's exactly when the
  // kernel's struct cred pointers would be (ib_safe_file_access; Tracer::Task::credentials).
  uint64_t credentials = 0;
};

// What to do with a syscall at entry.
class EntryDecision {
 public:
  enum class Kind { kAllow, kDeny, kEmulate };

  // Let the tracee run the syscall as issued; no exit callback (the cheapest outcome: one stop).
  static EntryDecision Allow() { return EntryDecision(Kind::kAllow, 0); }
  // Let it run and call OnExit with the result (costs a second stop).
  static EntryDecision AllowAndInspect() {
    EntryDecision d(Kind::kAllow, 0);
    d.inspect_exit_ = true;
    return d;
  }
  // Do not run it; the tracee sees -error.errnum. The harness logs error.reason.
  static EntryDecision Deny(Error error) {
    EntryDecision d(Kind::kDeny, -static_cast<long>(error.errnum));
    d.error_ = std::move(error);
    return d;
  }
  // Do not run it; the tracee sees `result` (>= 0, or -errno).
  static EntryDecision Emulate(long result) { return EntryDecision(Kind::kEmulate, result); }

  // kAllow only: run with argument register i set to `value`. Every register is restored at
  // exit (the tracee never sees the rewrite), which implies an exit stop; OnExit is called.
  EntryDecision& WithArg(int i, uint64_t value) {
    new_args_[static_cast<size_t>(i)] = value;
    inspect_exit_ = true;
    return *this;
  }

  Kind kind() const { return kind_; }
  long result() const { return result_; }  // kDeny: -errno; kEmulate: the result
  bool inspect_exit() const { return inspect_exit_; }
  const std::optional<Error>& error() const { return error_; }
  const std::array<std::optional<uint64_t>, 6>& new_args() const { return new_args_; }

 private:
  EntryDecision(Kind kind, long result) : kind_(kind), result_(result) {}
  Kind kind_;
  long result_;
  bool inspect_exit_ = false;
  std::optional<Error> error_;
  std::array<std::optional<uint64_t>, 6> new_args_{};
};

// What to do with a syscall's result at exit.
class ExitDecision {
 public:
  static ExitDecision Keep() { return ExitDecision(std::nullopt); }
  static ExitDecision Replace(long result) { return ExitDecision(result); }
  const std::optional<long>& replacement() const { return replacement_; }

 private:
  explicit ExitDecision(std::optional<long> r) : replacement_(r) {}
  std::optional<long> replacement_;
};

// Why a handler's open file went away.
enum class CloseReason {
  kClosed,       // close, close_range, dup2/dup3 over it
  kExec,         // close-on-exec at execve
  kExit,         // the last process holding it exited or was killed
  kHarnessExit,  // the harness is shutting down with tracees still alive (they get SIGKILL)
};
const char* CloseReasonName(CloseReason reason);

class ProxiedFileHandler;

// What a handler may do to the calling tracee during a callback.
class TraceeAccess {
 public:
  virtual ~TraceeAccess() = default;

  // The calling tracee's memory (its whole address space).
  virtual TraceeMemory& memory() = 0;

  // OnEntry only: `size` bytes of scratch memory in the tracee, mapped read-only to it (so
  // another tracee thread cannot change what was validated) and writable through memory().
  // Valid until this syscall's exit, which this forces. Use it to hand the kernel a private,
  // validated copy of a buffer it reads, via EntryDecision::WithArg (the kernel cannot write
  // into it either: output buffers stay the program's). At most kScratchSlotSize bytes.
  virtual Result<uint64_t> Scratch(size_t size) = 0;

  // OnEntry only: like Scratch, but writable by the tracee, because the kernel writes into it
  // (an ioctl's attribute array: UVERBS_ATTR_F_VALID_OUTPUT flags, new object ids). Valid
  // until this syscall's exit, which this forces.
  //
  // The guarantee, when the harness freezes address spaces (HarnessOptions::
  // freeze_address_space; on unless `rdmaproxy run --no-freeze-threads`, see
  // docs/harness.md): from the moment this returns until OnExit has returned, no other task that
  // shares the caller's address space (its other threads, CLONE_VM processes such as a vfork
  // child) runs user code or a syscall that could write the slot: each is held in a
  // ptrace-stop — or, having reported none, is a vfork parent asleep until a held child
  // releases the mm, or an exiting task past exit_mm. So what the handler writes here after
  // this call is exactly what the kernel reads, and what it reads back at exit is exactly what
  // the kernel wrote. They resume afterwards as they would have; a syscall one of them slept in
  // is restarted (a few, such as epoll_wait, return EINTR instead: docs/harness.md). Other
  // processes of the program cannot write it either (process_vm_writev: tracer_process_vm.cc;
  // /proc/<pid>/mem is not opened for writing); untraced ones, and DMA through an implicit ODP
  // MR, are not covered; no other pinned range may overlap the region (ScratchRegion):
  // docs/threat-model.md.
  //
  // Cost: none when the caller is alone in its address space; otherwise a PTRACE_INTERRUPT
  // and a held stop per other task, and the tracer waits for them (tracer_freeze.cc). Errors:
  // EAGAIN when they did not all stop within TracerOptions::freeze_timeout (nothing stays
  // frozen; refuse the call), ESRCH when the caller died meanwhile.
  virtual Result<uint64_t> KernelScratch(size_t size) = 0;

  // The scratch region of the caller's address space as {start, length} (both halves), or
  // nullopt while it has none. An engine refuses to have memory there pinned: an MR over the
  // kernel-writable slots would let a device write them during a call (docs/threat-model.md).
  virtual std::optional<std::pair<uint64_t, uint64_t>> ScratchRegion() = 0;

  // The handler of the calling process's proxied fd `fd`, or null when `fd` is not one (any
  // other file, or no file). Lets a handler check an fd a command names (a completion
  // channel in CREATE_CQ) against what it is.
  virtual ProxiedFileHandler* HandlerOf(int fd) = 0;

  // OnExit (and FileHandlerFactory::OnOpen) only: moves the tracee's fd `fd` — say one the
  // kernel just returned inside an ioctl response — into the reserved range, keeping its
  // close-on-exec flag, closes the old number and makes `handler` its handler. Returns the new
  // fd number; the caller rewrites wherever the app will look for it. On failure `fd` is
  // closed in the tracee (unless it died), as a failed open's is (AdoptIntoRange).
  virtual Result<int> AdoptFd(int fd, std::unique_ptr<ProxiedFileHandler> handler,
                              std::string label) = 0;
};

class ProxiedFileHandler {
 public:
  virtual ~ProxiedFileHandler() = default;
  virtual EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) = 0;
  // `result` is the raw return value (-errno on failure). When it is a kernel restart code
  // (IsRestartCode in regs.h) the syscall will be re-issued — and OnEntry called again — so a
  // replacement is ignored; undo any memory rewrite instead.
  virtual ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess& tracee) = 0;
  virtual void OnClose(CloseReason reason) = 0;
  // Whether the file's reads, writes, ioctls and mmaps must stop: true keeps it in the
  // reserved range's stopping half (FdRange::StoppingHalf); false puts it in the quiet half,
  // where only RDMA_VERBS_IOCTL, dup and close of it stop. False only for files the kernel
  // answers with nothing to check or translate.
  virtual bool DataSyscallsStop() const { return true; }
};

// A proxied path the tracee has just opened.
struct OpenedPath {
  pid_t tid = 0;
  pid_t tgid = 0;
  std::string sandbox_path;  // as the app named it, absolute ("/dev/infiniband/uverbs0")
  std::string host_path;     // what the tracee actually opened ("/dev/infiniband/uverbs3")
  std::string label;         // the resolver's name for it ("uverbs0", "rdma_cm")
  int flags = 0;             // the open file's flags (fdinfo), as open(2) flags
  int fd = -1;               // the new fd, already in the reserved range
  uint64_t credentials = 0;  // the opening thread's (SyscallView::credentials): the file's f_cred
};

// A process-level change in the traced tree.
struct ProcessEvent {
  enum class Kind {
    kFork,  // a new process (fork, vfork, clone without CLONE_THREAD)
    kExec,  // tgid executed a new program (close-on-exec fds are already gone)
    kExit,  // the last thread of tgid is gone
    kCredentials,  // a thread of tgid got new credentials (tracer_credentials.cc); the
                   // thread's later calls carry the new SyscallView::credentials
  };
  Kind kind = Kind::kFork;
  pid_t tgid = 0;
  pid_t parent_tgid = 0;          // kFork
  bool shares_fd_table = false;   // kFork: CLONE_FILES (else the fd table was copied)
  bool shares_memory = false;     // kFork: CLONE_VM (vfork, posix_spawn)
};

class FileHandlerFactory {
 public:
  virtual ~FileHandlerFactory() = default;
  // A path the resolver marked as proxied was opened and its fd moved into the reserved range.
  // Return its handler, or an Error: the open then fails with that errno (the fd is closed in
  // the tracee) and the reason is logged.
  virtual Result<std::unique_ptr<ProxiedFileHandler>> OnOpen(const OpenedPath& opened,
                                                             TraceeAccess& tracee) = 0;
  virtual void OnProcessEvent(const ProcessEvent& event) { (void)event; }
};

}  // namespace rxp::harness
