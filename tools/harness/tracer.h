// Tracer: the event loop that owns every ptrace call for a traced process tree.
//
// One thread (the caller of Run) waits for every tracee with waitpid(-1, __WALL) and
// dispatches each stop:
//   * seccomp stops (a rule of intercept_rules.h fired; the tracer runs its own compiled
//     filters on the call to learn which, tracer_bypasses.cc) go to the fd
//     model and the proxied file's handler (tracer_fd.cc) or to path redirection
//     (tracer_path.cc); the verdict is applied by skipping the syscall (orig_rax = -1), by
//     rewriting argument registers, and/or by asking for the exit stop (PTRACE_SYSCALL);
//   * syscall-exit stops run the continuation recorded at entry and restore every register the
//     harness changed, so the tracee never sees a rewrite;
//   * fork/vfork/clone events create the child's state (fd table shared or copied, address
//     space shared or copied, from the clone flags); exec events migrate a non-leader's state to
//     the thread-group leader's tid, drop the old address space and apply close-on-exec;
//   * group-stops are parked with PTRACE_LISTEN; signal-delivery stops re-inject the signal;
//   * while a thread runs a syscall on a kernel-writable scratch slot (TraceeAccess::
//     KernelScratch), every other task of its address space is held in a ptrace-stop
//     (tracer_freeze.cc): their statuses wait in the freeze and are handled, in order, after
//     that syscall's exit stop.
// Per-thread state is keyed by tid; per-address-space and per-fd-table state is shared the way
// the kernel shares mm and files_struct.
//
// Kernel facts this relies on are cited where they are used. Linux >= 5.3 (PTRACE_GET_SYSCALL_INFO)
// and >= 4.8 (seccomp stop after the ptrace entry stop, re-check after it) are required.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "abi/result.h"
#include "tools/harness/address_space.h"
#include "tools/harness/fd_range.h"
#include "tools/harness/fd_table.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"
#include "tools/harness/intercept_rules.h"
#include "tools/harness/live_processes.h"
#include "tools/harness/path_canon.h"
#include "tools/harness/path_resolver.h"
#include "tools/harness/ptrace_ops.h"
#include "tools/harness/regs.h"
#include "tools/harness/seccomp_filter.h"
#include "rdmaproxy/netlink_answer.h"
#include "tools/harness/stop_waiter.h"
#include "tools/harness/syscall_injector.h"

namespace rxp::harness {

struct TracerOptions {
  FdRange range = *FdRange::Make(768, 256);
  // The base filter (BuildBaseRules, compiled), installed in the first tracee before exec.
  // With it, the tracer decides what each seccomp stop is by running its own filters on the
  // call (seccomp_run.h) instead of believing the stop's tag, which a filter the program
  // installed can set. Null: the tag is believed (a tracee with no filter but the harness's).
  const BpfProgram* base_filter = nullptr;
  // The device filter (BuildDeviceRules, compiled), added to a process with its first proxied
  // fd. Null: the base filter must then contain the fd-range rules itself (tests).
  const BpfProgram* device_filter = nullptr;
  // Where a scratch region that is not sealed goes, at a fixed address; the rules that stop
  // calls which could reach it (BuildGuardRules) are in base_filter, or in guard_filter. The
  // tracer refuses the ones that do. Unset: the kernel places every region.
  std::optional<ScratchWindow> scratch_window;
  // Seal each scratch region with mseal(2) where the kernel has it (Linux 6.10), except in a
  // process with seccomp filters of its own: one might kill it for the injected mseal (an
  // allow-list that predates the call), so its region goes at scratch_window instead, and the
  // process gets guard_filter first. False: every region goes at scratch_window (whose rules
  // base_filter then holds).
  bool seal_scratch = true;
  // BuildGuardRules(*scratch_window), compiled: added to a process whose region goes at the
  // window while base_filter lacks those rules (seal_scratch on a kernel with mseal). Null:
  // such a process's region is not sealed and not guarded (tests).
  const BpfProgram* guard_filter = nullptr;
  // BuildNofileQueryRules(), compiled: added to a process whose RLIMIT_NOFILE hard limit the
  // tracer keeps above what the program set, so that its queries show the value set
  // (tracer_limits.cc). Null: they show the kept one (tests).
  const BpfProgram* nofile_filter = nullptr;
  const PathResolver* resolver = nullptr;   // null: path lookups pass through
  FileHandlerFactory* factory = nullptr;    // null: proxied opens fail with ENODEV
  HostFs* host_fs = nullptr;                // null: LocalHostFs
  // Create a new task's state from its creator's fork/clone event (the clone flags). False
  // (tests): always from /proc/<tid>/status and kcmp(2) at the new task's first stop, the path
  // taken when that stop is reported before the event.
  bool trust_clone_events = true;
  // (tests) Hold each fork/vfork/clone event, its creator left in the event stop, until the new
  // task has committed credentials of its own (a credential call, exec) or is gone: the orders
  // in which a new task's own stops, or its death, come before its creator's event -- which the
  // kernel allows and a freeze makes usual, but which no test could count on -- made certain.
  // A held creator is in no freeze's reckoning, and the new task must not wait for it: only for
  // programs whose calls freeze nothing.
  bool hold_creator_events = false;
  // How long a freeze waits for the other tasks of the caller's address space and fd table to
  // stop before it gives up (EAGAIN); only a task stuck in an uninterruptible wait takes long.
  std::chrono::milliseconds freeze_timeout{5000};
  // Whether KernelScratch, and a syscall that makes a proxied device fd outside the reserved
  // range (FreezeAroundNewFd), freeze the tasks sharing the caller's address space or fd table
  // (on unless `rdmaproxy run --no-freeze-threads`): without it, another thread can rewrite a
  // validated ioctl image before the kernel reads it, or reach a new device fd before it is
  // moved into the range. The price: a freeze interrupts the other threads' blocked
  // syscalls and the kernel restarts them, so a thread blocked on an fd that another thread
  // closed earlier gets EBADF on the restart instead of staying blocked -- docs/harness.md,
  // "Address-space freezes".
  bool freeze_address_space = true;
  // How long the tracer polls for a tracee's next stop before it sleeps in waitpid (at most;
  // stop_waiter.h adapts it). 0: never poll. `rdmaproxy run --stop-poll-us`; off by default,
  // because polling tracers that outnumber the CPUs slow each other down (docs/harness.md,
  // "Polling for stops").
  std::chrono::microseconds stop_poll{0};
  Log* log = nullptr;                       // null: errors to stderr, no trace
  // The devices whose RDMA netlink queries the harness answers on a program's NETLINK_RDMA
  // socket (netlink_answer.h). Null: none; every device query gets the kernel's EINVAL.
  std::shared_ptr<const std::vector<proxy::NetlinkDevice>> netlink_devices;
  // Kept up to date with the traced processes alive (null: not kept). `on_first_gone` runs
  // once, when every thread of the first program has reported its exit (PTRACE_EVENT_EXIT:
  // none returns to user space; a signal sent to it now would be lost) or, if that was not
  // seen (a SIGKILL), when it has been reaped (its pid may be reused from then on).
  LiveProcesses* live = nullptr;
  std::function<void()> on_first_gone;
  // Runs when a thread of the first program reports a group-stop (it is left stopped).
  std::function<void()> on_first_stopped;
};

// Counters: how often the tracee stopped and why (tests use them to prove that untouched
// syscalls never stop; --stats prints them).
struct TracerStats {
  uint64_t seccomp_stops = 0;
  uint64_t exit_stops = 0;
  uint64_t injected_syscalls = 0;
  uint64_t signals_delivered = 0;
  uint64_t paths_rewritten = 0;
  uint64_t paths_failed = 0;
  uint64_t fds_moved = 0;     // fds moved into the reserved range
  uint64_t device_filters = 0;  // processes given the device filter
  uint64_t early_children = 0;  // new tasks seen before their creator's fork/clone event
  // Tasks the tracer still believed alive when the last tracee was gone: each one a model
  // error (a task recorded twice, or never seen to die). Always 0 unless there is a bug.
  uint64_t tasks_left_over = 0;
  uint64_t denied = 0;        // syscalls skipped with an error by the harness or a handler
  // Seccomp stops that the program's own filters asked for (RET_TRACE where the harness's
  // filters allow the call): each answered ENOSYS, as with no tracer attached.
  uint64_t foreign_trace_stops = 0;
  // Freezes (tracer_freeze.cc): KernelScratch calls and device opens and copies that had to
  // stop other tasks, the PTRACE_INTERRUPTs that took, the stops held until a freeze ended,
  // and the freezes given up (timeout, or the caller died meanwhile).
  uint64_t freezes = 0;
  uint64_t freeze_interrupts = 0;
  uint64_t held_stops = 0;
  uint64_t freeze_failures = 0;
  StopWaiter::Stats waits;    // stops caught while polling, and waits that slept
  std::array<uint64_t, static_cast<size_t>(Intercept::kCount)> by_intercept{};
};

// Whether the running kernel has mseal(2) (Linux 6.10), with which the tracer seals each
// address space's scratch region (tracer_inject.cc, EnsureScratch).
bool KernelSealsMappings();
// Where the scratch region goes on a kernel without it (ScratchWindow).
uint64_t LowScratchBase();

class Tracer {
 public:
  explicit Tracer(TracerOptions options);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Takes charge of `pid` — PTRACE_SEIZEd with kPtraceOptions and not yet resumed past its
  // exec — and runs until no tracee is left. Returns `pid`'s wait status.
  Result<int> Run(pid_t pid);

  TracerStats stats() const {
    TracerStats s = stats_;
    s.waits = waiter_.stats();
    return s;
  }

 private:
  class Access;
  class ExitStop;

  // Runs at the syscall-exit stop; returns the result the tracee will see.
  using ExitFn = std::function<long(class ExitStop& stop, long result)>;

  struct PendingExit {
    std::optional<Regs> restore;  // registers to put back (all but rax): set after a rewrite
    bool release_slot = false;    // the thread holds a scratch slot until now
    ExitFn on_exit;               // may be empty
  };

  struct Task {
    pid_t tid = 0;
    pid_t tgid = 0;
    std::shared_ptr<FdTable> fds;
    std::shared_ptr<AddressSpace> mm;
    bool started = false;  // its attach stop was seen (or it never had one: the first task)
    // Which credentials it has, as the kernel's struct cred pointer tells them apart: shared
    // with the thread that created it, new for a new process, after exec and after a call that
    // commits credentials (tracer_credentials.cc). Handlers compare it with an opener's
    // (SyscallView::credentials, OpenedPath::credentials): ib_safe_file_access.
    uint64_t credentials = 0;
    std::optional<PendingExit> pending;
    std::vector<int> deferred_signals;  // held back while the harness injected syscalls
    // Resumed from its PTRACE_EVENT_EXIT stop: it never runs user code again, and its exit
    // (exit_mm) is near.
    bool exiting = false;
    // Resumed from a PTRACE_EVENT_VFORK stop and not heard of since: asleep in
    // wait_for_vfork_done until this child releases the mm (exec or exit).
    pid_t vfork_child = 0;
    // Adopted from its own first stop (AdoptEarlyChild): its creator's fork/vfork/clone event
    // is still to come. Should it die first, its tid goes to early_deaths_, so that the event
    // does not track it again (a task that never reports a stop, which every freeze of its mm
    // would wait for, and whose tid, once reused, would be taken for it).
    bool creator_event_due = false;
    // It committed credentials of its own (a credential call, exec) since it was created: its
    // creator's event, should it come later, must not put the creator's back (OnNewTask).
    bool credentials_committed = false;
    // The stop being decided ended while a freeze was being set up (the thread died, or another
    // thread's exec took over its tid): its verdict must not be applied.
    bool stop_lost = false;
    // It may run under seccomp filters of the program's own (it or a creator installed one:
    // OnSeccompFilter; kept across fork, clone and exec, as the kernel keeps filters). Its
    // next scratch region is then not sealed (EnsureScratch).
    bool own_filters = false;
    // It entered strict mode (EnterStrictMode): a call but read, write, exit and rt_sigreturn
    // ends it, as SECCOMP_MODE_STRICT does.
    bool strict = false;
  };

  // A seccomp stop being decided.
  struct Stop {
    Task& task;
    long nr;
    std::array<uint64_t, 6> args;
    Intercept tag;
  };

  // The verdict for a seccomp stop.
  struct Verdict {
    enum class Kind { kContinue, kSkip, kWatchExit };
    Kind kind = Kind::kContinue;
    long result = 0;                                 // kSkip
    std::optional<long> new_nr;                      // kWatchExit: run another syscall instead
    std::array<std::optional<uint64_t>, 6> new_args{};  // kWatchExit: rewritten arguments
    bool release_slot = false;
    ExitFn on_exit;

    static Verdict Continue() { return {}; }
    static Verdict Skip(long result) {
      Verdict v;
      v.kind = Kind::kSkip;
      v.result = result;
      return v;
    }
    static Verdict WatchExit(ExitFn fn) {
      Verdict v;
      v.kind = Kind::kWatchExit;
      v.on_exit = std::move(fn);
      return v;
    }
  };

  enum class ResumeHow { kCont, kSyscall, kListen };

  // The other tasks of one address space and of one fd table, held stopped while `caller` runs
  // a syscall on a kernel-writable scratch slot, or one that makes a proxied fd at a number
  // outside the reserved range (tracer_freeze.cc).
  struct Freeze {
    pid_t caller = 0;
    std::shared_ptr<AddressSpace> mm;
    std::shared_ptr<FdTable> fds;
    std::vector<std::pair<pid_t, int>> held;  // their wait statuses, in the order reported
  };
  // Whether `task` is one the freeze stops: it shares the caller's mm or its fd table.
  static bool Covers(const Freeze& freeze, const Task& task);

  // Event loop (tracer.cc).
  void HandleStatus(pid_t tid, int status);
  void OnTaskGone(pid_t tid, int status);
  void TellFirstGone();
  void OnNewTask(Task& parent, int event);
  // TracerOptions::hold_creator_events: whether `creator`'s event stop is held now (false:
  // handle it, as when it is one held before and released).
  bool HoldCreatorEvent(const Task& creator, int status);
  void ReleaseCreatorEvent(pid_t child);
  // commit_creds() for `task`: new credentials of its own.
  void CommitCredentials(Task& task);
  // What a new task shares with the task that created it.
  struct Lineage {
    const Task* creator = nullptr;
    bool thread = false;         // CLONE_THREAD
    bool shares_files = false;   // CLONE_FILES
    bool shares_memory = false;  // CLONE_VM
  };
  Task& AddTask(pid_t tid, const Lineage& lineage, bool started);
  Task* AdoptEarlyChild(pid_t tid);
  uint64_t CloneFlags(Task& parent, int event);
  void OnExec(pid_t tid);
  void OnSeccompStop(Task& task);
  void OnSyscallExit(Task& task);
  void ApplyVerdict(Task& task, Verdict verdict);
  void Resume(Task& task, ResumeHow how, int sig);
  int TakeDeferredSignal(Task& task);
  bool EnsureScratch(Task& task);
  Result<uint64_t> WriteFilter(Task& task, const BpfProgram& program, uint64_t header);
  std::optional<Result<long>> InjectBeforeSyscall(Task& task, long nr,
                                                  const std::array<uint64_t, 6>& args);
  // The same for a sequence of calls run by `calls` through the InjectFn it is given.
  using InjectFn = std::function<Result<long>(long nr, const std::array<uint64_t, 6>& args)>;
  std::optional<Result<long>> InjectBeforeSyscall(
      Task& task, const std::function<Result<long>(const InjectFn&)>& calls);
  Result<void> EnsureDeviceFilter(ExitStop& stop);
  // Injects seccomp(SET_MODE_FILTER, TSYNC) of `program` at `stop`, through a scratch slot.
  Result<void> AddFilterAtExit(ExitStop& stop, const BpfProgram& program, std::string_view name);
  Result<void> InjectFilter(Task& task, uint64_t slot, const BpfProgram& program,
                            std::string_view name, const InjectFn& inject);
  bool InstallPendingDeviceFilter(Task& task);
  bool AddFiltersAheadOfOwn(Task& task);
  bool InstallPendingFilter(Task& task, const BpfProgram& program, std::string_view name,
                            std::set<pid_t>& pending, const std::function<void(Task&)>& added);
  void NoteDeviceFilter(Task& task);
  Task* FindTask(pid_t tid);
  Verdict Deny(const Stop& stop, const Error& error);

  // Address-space freezes (tracer_freeze.cc).
  // Stops every other task of `caller`'s address space and of its fd table; they stay stopped
  // until EndFreeze. Nothing to do (and no cost) when the caller shares neither.
  // `purpose` says what for, in the log line of a failure.
  Result<void> FreezeOthers(Task& caller, std::string_view purpose);
  // Freezes the others around a syscall of `stop.task` whose new fd names a proxied file
  // outside the reserved range until its exit stop moves it there (tracer_fd.cc). Returns the
  // verdict that refuses the call when they could not be stopped.
  std::optional<Verdict> FreezeAroundNewFd(const Stop& stop, std::string_view what);
  // Releases the freeze `task` holds, if any: the held statuses are handled next.
  void EndFreeze(const Task& task);
  // Keeps `status` for later when `tid` belongs to a frozen address space (not the caller).
  bool HoldIfFrozen(pid_t tid, int status);
  // Ends the freezes of dying processes whose caller has died unreported; true while one is
  // left that the event loop must keep polling for.
  bool PollDyingFreezes();
  Result<void> StopOthers(Freeze& freeze, Task& caller, std::set<pid_t>& awaited);
  bool CollectFrozenStops(Freeze& freeze, Task& caller, std::set<pid_t>& awaited);
  void DropUnneeded(const Freeze& freeze, std::set<pid_t>& awaited, bool check_all);
  bool VforkBlocked(const Task& parent, const Freeze& freeze, int depth) const;
  std::optional<int> LastHeldStatus(const Freeze& freeze, pid_t tid) const;

  // Fd model and proxied-file dispatch (tracer_fd.cc).
  Verdict OnFdSyscall(const Stop& stop);
  Verdict OnDup(const Stop& stop);
  Verdict OnDupTo(const Stop& stop);
  Verdict OnFcntlDup(const Stop& stop);
  Verdict OnClose(const Stop& stop);
  Verdict OnCloseRange(const Stop& stop);
  Verdict OnUnshare(const Stop& stop);
  Verdict OnSendFds(const Stop& stop);
  Verdict OnNetlinkSocket(const Stop& stop);
  // A NETLINK_RDMA socket of the tracer's in the network namespace of `exit`'s thread, made by
  // that thread (injected socket + close), when that namespace is not the tracer's; nullopt
  // when it is.
  Result<std::optional<UniqueFd>> NetlinkSocketInTaskNetns(ExitStop& exit);
  Verdict OnAioSubmit(const Stop& stop);
  // Credential changes of processes that hold proxied fds (tracer_credentials.cc).
  Verdict OnCredentials(const Stop& stop);
  // At the exit of `stop`'s call, `then` (if any) and then: when the call gave the thread new
  // credentials (credential_calls.h), a ProcessEvent::kCredentials for its process.
  ExitFn WatchCredentials(const Stop& stop, ExitFn then);
  // Whether this kernel commits new credentials for a no-op setresuid (asked once).
  bool NoOpSetresCommits();
  // RLIMIT_NOFILE against the reserved range (tracer_limits.cc, nofile_limit.h).
  Verdict OnNofileLimit(const Stop& stop);
  Verdict OnNofileQuery(const Stop& stop);
  // The process (tgid) a prlimit64 of `stop` is about (its pid argument; 0: the caller's), or
  // nullopt for one outside the traced tree.
  std::optional<pid_t> LimitTarget(const Stop& stop);
  // Adds the nofile filter to the process of `stop`'s thread, or to `tgid` (another one) at
  // its next stop.
  void EnsureNofileFilter(ExitStop& stop, pid_t tgid);
  bool InstallPendingNofileFilter(Task& task);
  // Routes around the tracer's checks (tracer_bypasses.cc): seccomp filters of the program's
  // own, untraced children, remap_file_pages.
  std::optional<Intercept> OwnIntercept(const Task& task, const SyscallInfo& info) const;
  Verdict OnForeignTrace(const Stop& stop);
  Verdict OnSeccompFilter(const Stop& stop);
  Verdict EnterStrictMode(const Stop& stop);
  void EndStrictViolator(Task& task, long nr);
  Verdict OnUntracedClone(const Stop& stop);
  Verdict OnRemapFilePages(const Stop& stop);
  Verdict OnScratchGuard(const Stop& stop);
  // process_vm_writev: no write into any traced address space's scratch region
  // (tracer_process_vm.cc).
  Verdict OnProcessVmWrite(const Stop& stop);
  Verdict FromEntryDecision(const Stop& stop, std::shared_ptr<OpenFile> file,
                            const SyscallView& view, EntryDecision decision, Access& access);
  Result<int> MoveIntoRange(ExitStop& stop, int fd, bool cloexec, bool quiet = false);
  FdRange ItsPlace(bool quiet) const;
  bool InItsHalf(uint64_t fd, bool quiet) const;
  Result<int> AdoptIntoRange(ExitStop& stop, int fd, bool cloexec);
  bool IsDeviceFile(const std::string& host_path) const;

  // Path redirection (tracer_path.cc).
  Verdict OnPath(const Stop& stop);
  Verdict OnGetcwd(const Stop& stop);
  Verdict DecidePath(const Stop& stop, const PathSyscall& row);
  // At the exit of an open that may give write access: a /proc/<pid>/mem file is closed again
  // and the open fails with EACCES (tracer_path.cc).
  ExitFn RefuseMemFileForWriting(const Stop& stop);
  Verdict RewritePath(const Stop& stop, const PathSyscall& row, const std::string& host,
                      ExitFn on_exit);
  Verdict EmulateProcFdReadlink(const Stop& stop, const PathSyscall& row,
                                const std::string& link);
  ExitFn AdoptOpenedFd(const Stop& stop, std::string sandbox, Resolution resolution, int flags);
  // `min`: the lowest number the program asked for (dup: 0).
  Verdict TrackDuplicate(const Stop& stop, std::shared_ptr<OpenFile> file, uint32_t min);

  TracerOptions options_;
  StopWaiter waiter_;
  std::unique_ptr<HostFs> own_host_fs_;
  std::unique_ptr<Log> own_log_;
  TracerStats stats_;
  pid_t main_pid_ = -1;
  std::optional<int> main_status_;
  bool first_gone_told_ = false;  // options_.on_first_gone has run
  std::map<pid_t, Task> tasks_;
  std::map<pid_t, int> threads_per_process_;  // tgid -> live tasks
  std::set<pid_t> early_deaths_;    // new tasks that died before their creator's event
  std::vector<std::pair<pid_t, int>> reaped_;  // deaths seen while injecting, processed later
  // Wait statuses reaped but not handled yet (while a freeze was set up, or held by one that
  // ended): the event loop handles them, in order, before it waits again.
  std::deque<std::pair<pid_t, int>> queued_;
  // Creators' fork/clone event stops held back (TracerOptions::hold_creator_events), by creator.
  struct HeldEvent {
    pid_t child = 0;
    int status = 0;
    bool released = false;  // queued again: handle it when it comes
  };
  std::map<pid_t, HeldEvent> held_events_;
  std::map<const AddressSpace*, Freeze> freezes_;  // by frozen address space
  // The per-process sets of harness filters had or due, as one list (a process's entries
  // are inherited by its children and end with it).
  std::array<std::set<pid_t>*, 5> FilterSets() {
    return {&device_filtered_, &guard_filtered_, &device_filter_pending_, &nofile_filtered_,
            &nofile_filter_pending_};
  }
  std::set<pid_t> device_filtered_;   // processes (tgid) that have the device filter
  std::set<pid_t> guard_filtered_;    // processes (tgid) that have options_.guard_filter
  std::set<pid_t> nofile_filtered_;   // processes (tgid) that have options_.nofile_filter
  std::set<pid_t> nofile_filter_pending_;  // ... and those that get it at their next stop
  // The RLIMIT_NOFILE hard limit each process (tgid) set, where the tracer keeps the real one
  // higher (at the reserved range's end): what its queries show, and what a raise is checked
  // against. Inherited on fork, kept across exec, as the kernel keeps rlimits (signal_struct).
  std::map<pid_t, rlim_t> nofile_hard_;
  // The harness itself runs under seccomp filters (a container's profile), and with it every
  // tracee: the kernel would refuse them strict mode.
  bool inherited_filters_ = false;
  std::optional<bool> noop_setres_commits_;  // NoOpSetresCommits, once asked
  uint64_t last_credentials_ = 0;  // the last Task::credentials handed out
  uint64_t NewCredentials() { return ++last_credentials_; }
  const BpfProgram strict_filter_ = StrictModeFilter();
  // Processes that share an fd table with a device-filtered one but lack the filter
  // (CLONE_FILES without CLONE_THREAD): it is added at their next stop.
  std::set<pid_t> device_filter_pending_;
  // (process, syscall) pairs whose foreign RET_TRACE has been logged: once each.
  std::set<std::pair<pid_t, long>> foreign_trace_logged_;
};

}  // namespace rxp::harness
