#include "tools/harness/tracer.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>

#include "tools/harness/ptrace_ops.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

bool IsStopSignal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// A thread's fd is still open (after exec applied close-on-exec).
bool FdExists(pid_t tid, int fd) {
  const std::string path = "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd);
  return faccessat(AT_FDCWD, path.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

}  // namespace

Tracer::Tracer(TracerOptions options) : options_(std::move(options)), waiter_(options_.stop_poll) {
  if (options_.host_fs == nullptr) {
    own_host_fs_ = std::make_unique<LocalHostFs>();
    options_.host_fs = own_host_fs_.get();
  }
  if (options_.log == nullptr) {
    own_log_ = std::make_unique<Log>();
    options_.log = own_log_.get();
  }
  // "Seccomp: 2" in /proc/self/status: filter mode (proc_pid_status, seccomp mode).
  if (FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    int mode = 0;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "Seccomp: %d", &mode) == 1) break;
    std::fclose(f);
    inherited_filters_ = mode != 0;
  }
}

Tracer::~Tracer() {
  // Tracees still alive here die with us (PTRACE_O_EXITKILL); their proxied files close.
  for (auto& [tid, task] : tasks_) task.fds->set_teardown_reason(CloseReason::kHarnessExit);
  tasks_.clear();
}

Result<int> Tracer::Run(pid_t pid) {
  main_pid_ = pid;
  Task first;
  first.tid = pid;
  first.tgid = pid;
  first.fds = std::make_shared<FdTable>();
  first.mm = std::make_shared<AddressSpace>();
  first.started = true;  // PTRACE_SEIZE does not stop it: there is no attach stop to wait for
  tasks_.emplace(pid, std::move(first));
  threads_per_process_[pid] = 1;
  if (options_.live != nullptr) options_.live->Add(pid);

  for (;;) {
    int status = 0;
    pid_t tid;
    if (!queued_.empty()) {
      std::tie(tid, status) = queued_.front();
      queued_.pop_front();
    } else {
      // Polling only while a dying process's freeze may outlive its caller (tracer_freeze.cc).
      const bool poll = !freezes_.empty() && PollDyingFreezes();
      // A freeze it ended queued the statuses it held: they come before any wait. (Waiting
      // instead hung a killed process for good: its other threads, held at PTRACE_EVENT_EXIT,
      // were never resumed, so the kernel had nothing more to report.)
      if (!queued_.empty()) continue;
      tid = poll ? waitpid(-1, &status, __WALL | WNOHANG) : waiter_.Wait(-1, &status);
      if (tid == 0) {
        timespec pause{0, 200'000};
        nanosleep(&pause, nullptr);
        continue;
      }
      if (tid < 0) {
        if (errno == EINTR) continue;
        if (errno == ECHILD) break;  // no tracee and no child left
        return Fail(errno, "waitpid: {}", std::strerror(errno));
      }
    }
    HandleStatus(tid, status);
    // Deaths observed while injecting into a thread are processed here, once nothing holds a
    // reference to that thread's state.
    while (!reaped_.empty()) {
      auto [dead, dead_status] = reaped_.back();
      reaped_.pop_back();
      OnTaskGone(dead, dead_status);
    }
  }
  stats_.tasks_left_over = tasks_.size();
  for (auto& [tid, task] : tasks_) task.fds->set_teardown_reason(CloseReason::kExit);
  tasks_.clear();
  if (!main_status_) return Fail(ECHILD, "lost track of process {}", pid);
  return *main_status_;
}

Tracer::Task* Tracer::FindTask(pid_t tid) {
  auto it = tasks_.find(tid);
  return it == tasks_.end() ? nullptr : &it->second;
}

void Tracer::HandleStatus(pid_t tid, int status) {
  if (!freezes_.empty() && HoldIfFrozen(tid, status)) return;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    OnTaskGone(tid, status);
    return;
  }
  if (!WIFSTOPPED(status)) return;
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  if (event == PTRACE_EVENT_EXEC) {
    // Reported under the thread-group leader's tid even when another thread exec'd.
    OnExec(tid);
    return;
  }
  Task* task = FindTask(tid);
  if (task == nullptr) {
    // A new thread or process whose creator's fork/clone event has not been seen yet (the two
    // are reported independently). Adopted as started: its attach stop resumes it below, any
    // other stop is handled as usual.
    task = AdoptEarlyChild(tid);
    if (task == nullptr) return;
  }
  // Whatever it reports, a vfork parent is out of wait_for_vfork_done.
  task->vfork_child = 0;
  switch (event) {
    case PTRACE_EVENT_SECCOMP:
      OnSeccompStop(*task);
      return;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      if (options_.hold_creator_events && HoldCreatorEvent(*task, status)) return;
      OnNewTask(*task, event);
      return;
    case PTRACE_EVENT_STOP:
      if (!task->started) {  // the attach stop of an auto-attached child
        task->started = true;
        Resume(*task, ResumeHow::kCont, 0);
      } else if (IsStopSignal(sig)) {
        // Group-stop under PTRACE_SEIZE: keep the thread stopped but let the tracer go on
        // (PTRACE_LISTEN); SIGCONT wakes it (ptrace(2), "Group-stop").
        Resume(*task, ResumeHow::kListen, 0);
        if (task->tgid == main_pid_ && options_.on_first_stopped) options_.on_first_stopped();
      } else {
        Resume(*task, ResumeHow::kCont, 0);
      }
      return;
    case PTRACE_EVENT_EXIT:
      task->exiting = true;
      // The first program's last thread is on its way out: from now on a signal sent to its
      // pid is lost (the process is dying, then a zombie until reaped), so signals go to what
      // is left of the tree at once. Its thread's clone events were all handled before
      // (each creator's stops come in order), so no thread of it is missing here.
      if (task->tgid == main_pid_ &&
          std::ranges::all_of(tasks_, [this](const auto& entry) {
            return entry.second.tgid != main_pid_ || entry.second.exiting;
          }))
        TellFirstGone();
      // A caller killed inside its frozen syscall has no exit stop (ptrace_stop does not stop
      // with a fatal signal pending), and the kernel reads its slot no more. Its death may not
      // be reported for a long time either: a thread-group leader's death waits for the other
      // threads (delay_group_leader), which the freeze holds at their own PTRACE_EVENT_EXIT.
      EndFreeze(*task);
      Resume(*task, ResumeHow::kCont, 0);
      return;
    case 0:
      if (sig == (SIGTRAP | 0x80)) {  // PTRACE_O_TRACESYSGOOD marks syscall stops
        OnSyscallExit(*task);
      } else {
        // A signal-delivery stop: deliver the signal as the kernel would have.
        ++stats_.signals_delivered;
        Resume(*task, ResumeHow::kCont, sig);
      }
      return;
    default:
      Resume(*task, ResumeHow::kCont, 0);
      return;
  }
}

void Tracer::Resume(Task& task, ResumeHow how, int sig) {
  // A thread that owes the harness a syscall-exit stop must keep reporting syscall stops.
  if (how == ResumeHow::kCont && task.pending) how = ResumeHow::kSyscall;
  static constexpr PtraceResume kHow[] = {PtraceResume::kCont, PtraceResume::kSyscall,
                                          PtraceResume::kListen};
  auto done = ResumeTask(task.tid, kHow[static_cast<int>(how)], sig);
  if (!done.ok() && done.error().errnum != ESRCH)
    options_.log->Error("cannot resume thread {}: {}", task.tid, done.error().ToString());
}

int Tracer::TakeDeferredSignal(Task& task) {
  if (task.deferred_signals.empty()) return 0;
  const int first = task.deferred_signals.front();
  // Resuming a syscall-exit stop with a signal sends it (ptrace_report_syscall: "this isn't
  // the same as continuing with a signal, but it will do"); any further ones are re-raised.
  for (size_t i = 1; i < task.deferred_signals.size(); ++i)
    syscall(SYS_tgkill, task.tgid, task.tid, task.deferred_signals[i]);
  task.deferred_signals.clear();
  return first;
}

void Tracer::TellFirstGone() {
  if (first_gone_told_) return;
  first_gone_told_ = true;
  if (options_.on_first_gone) options_.on_first_gone();
}

void Tracer::OnTaskGone(pid_t tid, int status) {
  if (tid == main_pid_) {
    main_status_ = status;
    if (options_.live != nullptr) options_.live->Remove(tid);
    TellFirstGone();
  }
  if (!held_events_.empty()) {
    // Killed in its held event stop: that status, queued again or not, is stale.
    if (auto held = held_events_.find(tid); held != held_events_.end()) {
      if (held->second.released)
        std::erase(queued_, std::pair<pid_t, int>{tid, held->second.status});
      held_events_.erase(held);
    }
    ReleaseCreatorEvent(tid);
  }
  auto it = tasks_.find(tid);
  if (it == tasks_.end()) {
    early_deaths_.insert(tid);
    return;
  }
  const pid_t tgid = it->second.tgid;
  // Dead before its creator's event was handled: that event must not bring it back.
  if (it->second.creator_event_due) early_deaths_.insert(tid);
  EndFreeze(it->second);
  it->second.mm->ReleaseSlot(tid);
  tasks_.erase(it);
  for (auto& [other_tid, other] : tasks_)
    if (other.vfork_child == tid) other.vfork_child = 0;  // its vfork child released the mm
  if (--threads_per_process_[tgid] <= 0) {
    threads_per_process_.erase(tgid);
    if (options_.live != nullptr) options_.live->Remove(tgid);
    for (std::set<pid_t>* filters : FilterSets()) filters->erase(tgid);
    nofile_hard_.erase(tgid);
    foreign_trace_logged_.erase(foreign_trace_logged_.lower_bound({tgid, LONG_MIN}),
                                foreign_trace_logged_.lower_bound({tgid + 1, LONG_MIN}));
    if (options_.factory != nullptr)
      options_.factory->OnProcessEvent({ProcessEvent::Kind::kExit, tgid, 0, false, false});
  }
}

uint64_t Tracer::CloneFlags(Task& parent, int event) {
  // The event stop happens inside the syscall, so the registers still hold its arguments.
  auto regs = Regs::Get(parent.tid);
  if (regs.ok()) {
    switch (regs->syscall_nr()) {
      case SYS_clone: return regs->arg(0);
      case SYS_clone3: {
        ProcessMemory memory(parent.tid, &parent.mm->mem_fd());
        // struct clone_args starts with the u64 flags (include/uapi/linux/sched.h).
        if (auto flags = memory.ReadValue<uint64_t>(regs->arg(0)); flags.ok()) return *flags;
        break;
      }
      case SYS_fork: return 0;
      case SYS_vfork: return CLONE_VM | CLONE_VFORK;
      default: break;
    }
  }
  // Fall back on what the event implies.
  if (event == PTRACE_EVENT_VFORK) return CLONE_VM | CLONE_VFORK;
  if (event == PTRACE_EVENT_FORK) return 0;
  return CLONE_VM | CLONE_FILES | CLONE_THREAD;
}

Tracer::Task& Tracer::AddTask(pid_t tid, const Lineage& lineage, bool started) {
  const Task* creator = lineage.creator;
  Task task;
  task.tid = tid;
  task.tgid = lineage.thread && creator != nullptr ? creator->tgid : tid;
  task.started = started;
  if (creator != nullptr) {
    task.fds = lineage.shares_files ? creator->fds : creator->fds->Clone();
    task.mm = lineage.shares_memory ? creator->mm : creator->mm->ForkCopy();
    // A child is created with a copy of its creator's seccomp filters (copy_seccomp), and is
    // due those its creator is due.
    for (std::set<pid_t>* filters : FilterSets())
      if (filters->count(creator->tgid) != 0) filters->insert(task.tgid);
    // rlimits are copied to a child (copy_signal), and shared by threads.
    if (auto hard = nofile_hard_.find(creator->tgid); hard != nofile_hard_.end())
      nofile_hard_.emplace(task.tgid, hard->second);
    task.own_filters = creator->own_filters;
    // copy_creds(): a thread shares its creator's credentials; a new process gets its own.
    task.credentials = lineage.thread ? creator->credentials : NewCredentials();
  } else {
    task.credentials = NewCredentials();
    task.fds = std::make_shared<FdTable>();
    task.mm = std::make_shared<AddressSpace>();
  }
  auto [it, inserted] = tasks_.insert_or_assign(tid, std::move(task));
  Task& added = it->second;
  if (++threads_per_process_[added.tgid] == 1 && options_.live != nullptr)
    options_.live->Add(added.tgid);
  if (!lineage.thread && options_.factory != nullptr)
    options_.factory->OnProcessEvent({ProcessEvent::Kind::kFork, added.tgid,
                                      creator != nullptr ? creator->tgid : 0,
                                      lineage.shares_files, lineage.shares_memory});
  return added;
}

void Tracer::OnNewTask(Task& parent, int event) {
  auto msg = GetEventMsg(parent.tid);
  const auto child = msg.ok() ? static_cast<pid_t>(*msg) : 0;
  const bool died = msg.ok() && early_deaths_.erase(child) != 0;
  Task* early = msg.ok() ? FindTask(child) : nullptr;
  if (early != nullptr) {
    early->creator_event_due = false;  // the event has come
    // Adopted as a thread of its process, it took the credentials of whichever thread was at
    // hand: now its creator is known -- unless it has committed new ones since (it ran a
    // setuid before this event was seen), which are its own.
    if ((CloneFlags(parent, event) & CLONE_THREAD) != 0 && !early->credentials_committed)
      early->credentials = parent.credentials;
  }
  // Nothing to create when the child was adopted already (its first stop came first), died
  // already, or (tests) children are to be adopted from what /proc and kcmp say.
  if (msg.ok() && !died && early == nullptr && options_.trust_clone_events) {
    const uint64_t flags = CloneFlags(parent, event);
    AddTask(child, {&parent, (flags & CLONE_THREAD) != 0, (flags & CLONE_FILES) != 0,
                    (flags & CLONE_VM) != 0},
            /*started=*/false);
  }
  // kernel_clone reports PTRACE_EVENT_VFORK before wait_for_vfork_done: once resumed, the parent
  // sleeps there until the child execs or exits (mm_release -> complete_vfork_done).
  // Not when the child, adopted early, has exec'd already (its exec event came first): the
  // parent then does not sleep there at all.
  if (event == PTRACE_EVENT_VFORK && msg.ok() && !died) {
    const Task* adopted = FindTask(child);
    if (adopted == nullptr || adopted->mm == parent.mm) parent.vfork_child = child;
  }
  Resume(parent, ResumeHow::kCont, 0);
}

bool Tracer::HoldCreatorEvent(const Task& creator, int status) {
  if (auto held = held_events_.find(creator.tid); held != held_events_.end()) {
    held_events_.erase(held);  // released: handled now
    return false;
  }
  auto msg = GetEventMsg(creator.tid);
  if (!msg.ok()) return false;
  held_events_.emplace(creator.tid, HeldEvent{static_cast<pid_t>(*msg), status});
  return true;
}

void Tracer::ReleaseCreatorEvent(pid_t child) {
  for (auto& [creator, held] : held_events_) {
    if (held.child != child || held.released) continue;
    held.released = true;
    queued_.emplace_back(creator, held.status);
  }
}

void Tracer::CommitCredentials(Task& task) {
  task.credentials = NewCredentials();
  task.credentials_committed = true;
  if (!held_events_.empty()) ReleaseCreatorEvent(task.tid);
}

// A new task stopped before its creator's fork/clone event was seen. Waiting for that event is
// not safe: a creator being killed never reports it (ptrace_stop does not stop with a fatal
// signal pending), and the child would stay in its attach stop for ever. So it is adopted at
// once: its process from /proc/<tid>/status, and whether it shares its creator's fd table and
// memory from kcmp(2) (KCMP_FILES, KCMP_VM; CONFIG_KCMP, on in Debian kernels). Without kcmp it
// is taken for a fork child (copies of both), or a thread (sharing both).
Tracer::Task* Tracer::AdoptEarlyChild(pid_t tid) {
  ++stats_.early_children;
  pid_t tgid = tid, ppid = 0;
  const std::string status_path = "/proc/" + std::to_string(tid) + "/status";
  if (FILE* f = std::fopen(status_path.c_str(), "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      int value = 0;
      if (std::sscanf(line, "Tgid: %d", &value) == 1) tgid = value;
      if (std::sscanf(line, "PPid: %d", &value) == 1) ppid = value;
    }
    std::fclose(f);
  }
  Lineage lineage;
  lineage.thread = tgid != tid;
  const pid_t creator_tgid = lineage.thread ? tgid : ppid;
  // Not a task past its PTRACE_EVENT_EXIT stop: exit_mm and exit_files have cleared its mm and
  // files, and kcmp would call the child's different -- a new thread would get copies of the
  // fd model and of the address-space state (scratch slots, freezes) instead of sharing them.
  for (const auto& [other_tid, other] : tasks_)
    if (other.tgid == creator_tgid && !other.exiting) lineage.creator = &other;
  if (lineage.creator != nullptr) {
    auto shares = [&](int kind) {
      const long same = syscall(SYS_kcmp, lineage.creator->tid, tid, kind, 0, 0);
      return same < 0 ? lineage.thread : same == 0;
    };
    lineage.shares_files = shares(KCMP_FILES);
    // CLONE_THREAD requires CLONE_SIGHAND, which requires CLONE_VM (copy_process).
    lineage.shares_memory = lineage.thread || shares(KCMP_VM);
  }
  // A record of an earlier task with this tid that died before its creator's event, which
  // never came (the creator was killed first), is stale now: the tid was reused.
  early_deaths_.erase(tid);
  Task* adopted = &AddTask(tid, lineage, /*started=*/true);
  adopted->creator_event_due = true;
  return adopted;
}

void Tracer::OnExec(pid_t tid) {
  // When a non-leader thread execs, every other thread is gone and it takes over the leader's
  // tid; the event message is its former tid (ptrace(2), "execve(2) under ptrace"). The old
  // leader is not reported dead, and the former tid simply vanishes.
  auto former = GetEventMsg(tid);
  if (former.ok() && static_cast<pid_t>(*former) != tid) {
    auto node = tasks_.extract(static_cast<pid_t>(*former));
    if (!node.empty()) {
      if (auto stale = tasks_.find(tid); stale != tasks_.end()) {
        --threads_per_process_[stale->second.tgid];
        tasks_.erase(stale);
      }
      // A creator's event still to come names the former tid, which is gone for good.
      if (node.mapped().creator_event_due) early_deaths_.insert(static_cast<pid_t>(*former));
      node.mapped().creator_event_due = false;
      node.key() = tid;
      node.mapped().tid = tid;
      tasks_.insert(std::move(node));
    }
  }
  Task* task = FindTask(tid);
  if (task == nullptr) task = AdoptEarlyChild(tid);
  EndFreeze(*task);
  // A new program, a new mm: no scratch region, no /proc/<pid>/mem fd for the old one.
  task->mm = std::make_shared<AddressSpace>();
  task->pending.reset();
  task->exiting = false;
  task->vfork_child = 0;
  CommitCredentials(*task);  // prepare_exec_creds()
  // A held creator's event names the former tid (tests: hold_creator_events).
  if (!held_events_.empty() && former.ok()) ReleaseCreatorEvent(static_cast<pid_t>(*former));
  // A vfork parent of this task (or of its former tid) is out of its wait: exec_mm_release.
  const pid_t former_tid = former.ok() ? static_cast<pid_t>(*former) : tid;
  for (auto& [other_tid, other] : tasks_)
    if (other.vfork_child == tid || other.vfork_child == former_tid) other.vfork_child = 0;
  // exec unshares the fd table (unshare_files) and closes close-on-exec fds
  // (do_close_on_exec): keep the proxied fds that are still there.
  std::shared_ptr<FdTable> old = task->fds;
  auto table = old->Clone();
  table->EraseIf([&](int fd) { return !FdExists(tid, fd); }, CloseReason::kExec);
  if (old.use_count() == 2) old->set_teardown_reason(CloseReason::kExec);  // only we held it
  task->fds = std::move(table);
  old.reset();
  if (options_.factory != nullptr)
    options_.factory->OnProcessEvent({ProcessEvent::Kind::kExec, task->tgid, 0, false, false});
  Resume(*task, ResumeHow::kCont, 0);
}

void Tracer::OnSeccompStop(Task& task) {
  ++stats_.seccomp_stops;
  auto info = GetSyscallInfo(task.tid);
  if (!info.ok() || info->op != PTRACE_SYSCALL_INFO_SECCOMP) {
    Resume(task, ResumeHow::kCont, 0);
    return;
  }
  if (!task.mm->has_scratch() && !task.mm->scratch_unavailable() && EnsureScratch(task)) return;
  if (device_filter_pending_.count(task.tgid) != 0 && task.mm->has_scratch() &&
      InstallPendingDeviceFilter(task))
    return;
  if (nofile_filter_pending_.count(task.tgid) != 0 && task.mm->has_scratch() &&
      InstallPendingNofileFilter(task))
    return;

  // A thread in (emulated) strict mode stops for every call it may not make.
  if (task.strict && !StrictModeAllows(info->nr)) {
    EndStrictViolator(task, info->nr);
    return;
  }
  // Which rule fired, from the harness's own filters: a filter the program added may have
  // reported another tag, or asked for this stop itself (tracer_bypasses.cc).
  const std::optional<Intercept> own = OwnIntercept(task, *info);
  if (!own) {
    ApplyVerdict(task, OnForeignTrace({task, info->nr, info->args, Intercept::kCount}));
    return;
  }
  const Intercept tag = *own;
  if (static_cast<size_t>(tag) < stats_.by_intercept.size())
    ++stats_.by_intercept[static_cast<size_t>(tag)];
  // The process's first filter of its own: the harness's filters go in ahead of it.
  if (tag == Intercept::kSeccompFilter && !task.own_filters &&
      ClassifySeccomp(info->nr, info->args) == SeccompRequest::kFilter &&
      AddFiltersAheadOfOwn(task))
    return;
  // clang-format off
  static constexpr struct {
    Intercept tag;
    Verdict (Tracer::*dispatch)(const Stop&);
  } kDispatch[] = {
    {Intercept::kFdSyscall,    &Tracer::OnFdSyscall},
    {Intercept::kVerbsIoctl,   &Tracer::OnFdSyscall},
    {Intercept::kDup,          &Tracer::OnDup},
    {Intercept::kDupTo,        &Tracer::OnDupTo},
    {Intercept::kFcntlDup,     &Tracer::OnFcntlDup},
    {Intercept::kClose,        &Tracer::OnClose},
    {Intercept::kCloseRange,   &Tracer::OnCloseRange},
    {Intercept::kUnshare,      &Tracer::OnUnshare},
    {Intercept::kPath,         &Tracer::OnPath},
    {Intercept::kSendFds,      &Tracer::OnSendFds},
    {Intercept::kNetlinkSocket, &Tracer::OnNetlinkSocket},
    {Intercept::kAioSubmit,    &Tracer::OnAioSubmit},
    {Intercept::kNofileLimit,  &Tracer::OnNofileLimit},
    {Intercept::kNofileQuery,  &Tracer::OnNofileQuery},
    {Intercept::kSeccompFilter, &Tracer::OnSeccompFilter},
    {Intercept::kUntracedClone, &Tracer::OnUntracedClone},
    {Intercept::kRemapFilePages, &Tracer::OnRemapFilePages},
    {Intercept::kScratchGuard, &Tracer::OnScratchGuard},
    {Intercept::kGetcwd,       &Tracer::OnGetcwd},
    {Intercept::kCredentials,  &Tracer::OnCredentials},
    {Intercept::kProcessVmWrite, &Tracer::OnProcessVmWrite},
  };
  // clang-format on
  const Stop stop{task, info->nr, info->args, tag};
  for (const auto& row : kDispatch) {
    if (row.tag == tag) {
      Verdict verdict = (this->*row.dispatch)(stop);
      if (task.stop_lost) {  // the thread died or was replaced while a freeze was set up
        task.stop_lost = false;
        return;
      }
      ApplyVerdict(task, std::move(verdict));
      return;
    }
  }
  Resume(task, ResumeHow::kCont, 0);  // a tag this tracer does not know: allow
}

void Tracer::ApplyVerdict(Task& task, Verdict verdict) {
  // A syscall that will have no exit stop must not leave its address space frozen.
  if (verdict.kind != Verdict::Kind::kWatchExit) EndFreeze(task);
  switch (verdict.kind) {
    case Verdict::Kind::kContinue:
      Resume(task, ResumeHow::kCont, 0);
      return;
    case Verdict::Kind::kSkip: {
      auto regs = Regs::Get(task.tid);
      if (!regs.ok()) return;  // gone; its exit status follows
      regs->SkipSyscall(verdict.result);
      if (regs->Set(task.tid).ok()) Resume(task, ResumeHow::kCont, 0);
      return;
    }
    case Verdict::Kind::kWatchExit: {
      PendingExit pending;
      pending.release_slot = verdict.release_slot;
      pending.on_exit = std::move(verdict.on_exit);
      bool rewrite = verdict.new_nr.has_value();
      for (const auto& arg : verdict.new_args) rewrite = rewrite || arg.has_value();
      if (rewrite) {
        auto regs = Regs::Get(task.tid);
        if (!regs.ok()) return;
        pending.restore = *regs;
        Regs changed = *regs;
        if (verdict.new_nr) changed.set_syscall_nr(*verdict.new_nr);
        for (int i = 0; i < 6; ++i)
          if (const auto& arg = verdict.new_args[static_cast<size_t>(i)]) changed.set_arg(i, *arg);
        if (!changed.Set(task.tid).ok()) return;
      }
      task.pending = std::move(pending);
      Resume(task, ResumeHow::kSyscall, 0);
      return;
    }
  }
}

void Tracer::OnSyscallExit(Task& task) {
  if (!task.pending) {
    Resume(task, ResumeHow::kCont, 0);
    return;
  }
  auto info = GetSyscallInfo(task.tid);
  if (info.ok() && info->op != PTRACE_SYSCALL_INFO_EXIT) {
    // Not the exit we are waiting for (cannot happen with the kernel's stop order, but
    // restoring registers at the wrong stop would corrupt the thread): keep waiting.
    Resume(task, ResumeHow::kSyscall, 0);
    return;
  }
  ++stats_.exit_stops;
  PendingExit pending = std::move(*task.pending);
  task.pending.reset();
  auto regs = Regs::Get(task.tid);
  if (!regs.ok()) return;
  const long result = regs->result();
  ExitStop stop(*this, task, *regs);
  long final_result = pending.on_exit ? pending.on_exit(stop, result) : result;
  if (auto death = stop.death_status()) {
    reaped_.emplace_back(task.tid, *death);
    return;
  }
  // The kernel will restart the syscall with the registers we leave: its result register
  // must stay the restart code (arch_do_signal_or_restart reads it).
  if (IsRestartCode(result)) final_result = result;
  if (pending.release_slot) task.mm->ReleaseSlot(task.tid);
  if (pending.restore || stop.touched() || final_result != result) {
    Regs out = pending.restore ? *pending.restore : *regs;
    out.set_ip(regs->ip());
    out.set_result(final_result);
    if (!out.Set(task.tid).ok()) return;
  }
  Resume(task, ResumeHow::kCont, TakeDeferredSignal(task));
  // The syscall and its exit handling are over: the other tasks of its address space may run.
  EndFreeze(task);
}

Tracer::Verdict Tracer::Deny(const Stop& stop, const Error& error) {
  ++stats_.denied;
  options_.log->Error("[pid {}] {}: {}", stop.task.tid, SyscallName(stop.nr), error.ToString());
  return Verdict::Skip(-static_cast<long>(error.errnum));
}

}  // namespace rxp::harness
