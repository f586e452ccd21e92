// Freezes: what makes TraceeAccess::KernelScratch safe, and a proxied fd's first moments.
//
// A kernel-writable scratch slot (AddressSpace::KernelSlotOf) is writable by every task that
// shares the caller's mm — its other threads, and processes created with CLONE_VM (vfork,
// posix_spawn). A validated copy placed there must not change between the handler's check and
// the kernel's copy_from_user, nor between the kernel's put_user of its outputs and the
// handler's reading them back at exit. Likewise a device the kernel opens at the lowest free
// fd number (or a copy of one that spills above a full range) is usable, by every task that
// shares the caller's fd table, without a stop until the caller's exit stop moves it into the
// reserved range (tracer_fd.cc, FreezeAroundNewFd). So before such a call runs, every other
// task of the caller's mm and of its fd table is brought into a ptrace-stop, and none is
// resumed before the caller's syscall-exit stop has been handled:
//
//   1. statuses already reaped but not handled yet (queued_), or held by another freeze, mean
//      their tasks are stopped; queued ones move into the freeze. Statuses waiting in the
//      kernel are reaped next (WNOHANG), so that only running tasks are interrupted.
//   2. every other task gets PTRACE_INTERRUPT (ptrace(2)): one in user space traps at once
//      (PTRACE_EVENT_STOP), one sleeping interruptibly in a syscall is woken, and traps on its
//      way out — at its syscall-exit stop when PTRACE_SYSCALL is in effect, else at
//      PTRACE_EVENT_STOP; the syscall is restarted when it is resumed (-ERESTART* and
//      arch_do_signal_or_restart), as after any ptrace-stop.
//   3. the tracer reaps statuses until each of them has reported one or is gone. A status of
//      a task the freeze covers is held in the freeze; any other is queued for the event loop.
//      Waiting polls (waitpid WNOHANG) so that it can end after TracerOptions::freeze_timeout.
//   4. the event loop then holds every status of the covered tasks (HoldIfFrozen), deaths
//      included, so that each task's statuses stay in order; EndFreeze at the caller's exit
//      stop (or its PTRACE_EVENT_EXIT stop, or its death) queues them, and they are handled as
//      if they had just been reported (a group-stop is parked with PTRACE_LISTEN, a signal
//      delivered, a seccomp stop decided). A caller that dies without a word is watched for
//      by polling (PollDyingFreezes).
//
// Two freezes can cover one task (a CLONE_FILES sibling process shares one's fd table and
// another's mm). The later one counts a task the earlier one holds as stopped; when the
// earlier one ends, the task's statuses pass through HoldIfFrozen again and the later one
// holds them. Neither waits for the other: a freeze's caller was at a stop of its own when the
// freeze began, so no freeze begun earlier holds it.
//
// Facts about tasks that never report a stop, and why they need none:
//   * a task resumed from PTRACE_EVENT_EXIT (Task::exiting) never returns to user space, but
//     exit_mm (mm_release: clear_child_tid, the robust futex list) still writes user memory:
//     it counts as stopped once /proc says it is a zombie (a group leader's death is not
//     reported while other threads live: wait_consider_task, delay_group_leader);
//   * a vfork parent sleeps in wait_for_vfork_done after its PTRACE_EVENT_VFORK stop and writes
//     no user memory before it returns to user space, where the interrupt stops it; it counts as
//     stopped while its child is itself held before releasing the mm (its exec event or exit);
//   * a new task runs no user code before its attach stop (ptrace_init_task gives a seized
//     child JOBCTL_TRAP_STOP), but schedule_tail writes its tid to CLONE_CHILD_SETTID's address
//     first: a child created meanwhile (its creator reported the fork/clone event) that shares
//     the mm is awaited. One that shares only the fd table uses no fd before that stop, which
//     HoldIfFrozen holds.
//
// The cost is zero when the caller shares neither its mm nor its fd table, and for the others
// a PTRACE_INTERRUPT and a stop (two context switches) per other task, per frozen call.
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <linux/kcmp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>

#include "tools/harness/ptrace_ops.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

using Clock = std::chrono::steady_clock;

int EventOf(int status) { return status >> 16; }

bool IsCloneEvent(int event) {
  return event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
         event == PTRACE_EVENT_CLONE;
}

// The state letter of /proc/<tid>/stat (proc(5): "R", "S", "D", "Z", ...); 0 when no such task
// exists any more (reaped, or a former tid of a thread that exec'd).
char TaskState(pid_t tid) {
  const std::string path = "/proc/" + std::to_string(tid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return 0;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // "pid (comm) S ...": comm may hold spaces and parentheses, so look after the last ')'.
  const std::string text(buf, n);
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return '?';
  return text[close + 2];
}

// The task has left its mm for good (exit_mm runs before it becomes a zombie), or is gone.
bool HasLeftItsMm(pid_t tid) {
  const char state = TaskState(tid);
  return state == 0 || state == 'Z' || state == 'X';
}

// After this long, every awaited task is also checked in /proc (a zombie or a vanished tid
// never reports a stop).
constexpr auto kSlowCheckAfter = std::chrono::milliseconds(20);

// Between polls: yield a few times (a trap is usually reported within microseconds), then
// sleep, doubling from 20 us to 1 ms.
void Pause(int round) {
  if (round < 4) {
    sched_yield();
    return;
  }
  const long ns = std::min(20'000L << std::min(round - 4, 6), 1'000'000L);
  timespec ts{0, ns};
  nanosleep(&ts, nullptr);
}

}  // namespace

bool Tracer::Covers(const Freeze& freeze, const Task& task) {
  return task.mm == freeze.mm || (freeze.fds != nullptr && task.fds == freeze.fds);
}

Result<void> Tracer::FreezeOthers(Task& caller, std::string_view purpose) {
  if (!options_.freeze_address_space) return Ok();
  AddressSpace* mm = caller.mm.get();
  if (auto it = freezes_.find(mm); it != freezes_.end()) {
    if (it->second.caller == caller.tid) return Ok();  // a second frozen step in one call
    // Cannot happen: the stops of a frozen address space's tasks are held, so none of them
    // reaches a handler until the freeze ends.
    return Fail(EDEADLK, "address space of thread {} is already frozen for thread {}",
                caller.tid, it->second.caller);
  }
  Freeze scope;
  scope.caller = caller.tid;
  scope.mm = caller.mm;
  scope.fds = caller.fds;
  std::set<pid_t> awaited;
  for (const auto& [tid, task] : tasks_)
    if (tid != caller.tid && Covers(scope, task)) awaited.insert(tid);
  if (awaited.empty()) return Ok();  // nothing shares its memory or its fds: nothing can race
  ++stats_.freezes;
  Freeze& freeze = freezes_[mm] = std::move(scope);
  auto stopped = StopOthers(freeze, caller, awaited);
  if (!stopped.ok()) {
    // Decided here, so logged here; the handler refuses the call with this errno.
    ++stats_.freeze_failures;
    options_.log->Error("[pid {}] cannot freeze the threads that share its memory or fds ({}): "
                        "{}", caller.tid, purpose, stopped.error().ToString());
    EndFreeze(caller);
  }
  return stopped;
}

Result<void> Tracer::StopOthers(Freeze& freeze, Task& caller, std::set<pid_t>& awaited) {
  // 1. Statuses reaped but not handled: those tasks are stopped. Their statuses move into the
  // freeze so that anything they report later stays behind them. Those another freeze holds
  // stay there: it hands them on when it ends (see the file comment).
  for (const auto& [mm, other] : freezes_) {
    if (&other == &freeze) continue;
    for (const auto& held : other.held) awaited.erase(held.first);
  }
  for (auto it = queued_.begin(); it != queued_.end();) {
    const Task* task = FindTask(it->first);
    if (task != nullptr && Covers(freeze, *task)) {
      awaited.erase(it->first);
      freeze.held.push_back(*it);
      ++stats_.held_stops;
      it = queued_.erase(it);
    } else {
      ++it;
    }
  }
  if (!CollectFrozenStops(freeze, caller, awaited))
    return Fail(ESRCH, "thread {} ended while its address space was being frozen", caller.tid);
  // 2. Interrupt the others.
  for (pid_t tid : awaited) {
    const Task* task = FindTask(tid);
    if (task != nullptr && task->exiting) continue;  // it never traps again
    if (InterruptTask(tid).ok()) ++stats_.freeze_interrupts;
  }
  // 3. Wait until each has reported a stop, died, or needs none.
  const auto start = Clock::now();
  for (int round = 0;; ++round) {
    if (!CollectFrozenStops(freeze, caller, awaited))
      return Fail(ESRCH, "thread {} ended while its address space was being frozen", caller.tid);
    const auto waited = Clock::now() - start;
    DropUnneeded(freeze, awaited, waited >= kSlowCheckAfter);
    if (awaited.empty()) return Ok();
    if (waited >= options_.freeze_timeout) {
      std::string tids;
      for (pid_t tid : awaited) {
        const char state = TaskState(tid);
        tids += (tids.empty() ? "" : ", ") + std::to_string(tid) + " (" +
                (state != 0 ? std::string(1, state) : "gone") + ")";
      }
      return Fail(EAGAIN,
                  "the other tasks of thread {}'s address space did not all stop within {} ms "
                  "(still running: {})",
                  caller.tid, options_.freeze_timeout.count(), tids);
    }
    Pause(round);
  }
}

// Reaps every status the kernel has ready. Returns false when one was the caller's: its stop
// is over (it died, or another thread's execve took over its tid: ptrace(2), "execve(2) under
// ptrace").
bool Tracer::CollectFrozenStops(Freeze& freeze, Task& caller, std::set<pid_t>& awaited) {
  bool caller_kept = true;
  for (;;) {
    int status = 0;
    const pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
    if (tid < 0 && errno == EINTR) continue;
    if (tid <= 0) return caller_kept;
    if (tid == caller.tid) {
      caller.stop_lost = true;
      caller_kept = false;
      queued_.emplace_back(tid, status);
      continue;
    }
    const Task* task = FindTask(tid);
    const bool ours = awaited.erase(tid) != 0 || (task != nullptr && Covers(freeze, *task));
    if (!ours) {
      queued_.emplace_back(tid, status);
      continue;
    }
    freeze.held.emplace_back(tid, status);
    ++stats_.held_stops;
    if (!WIFSTOPPED(status)) continue;
    const int event = EventOf(status);
    if (event == PTRACE_EVENT_EXEC) {
      // A non-leader that exec'd reports under the leader's tid; its own tid is gone.
      if (auto former = GetEventMsg(tid); former.ok()) awaited.erase(static_cast<pid_t>(*former));
    } else if (IsCloneEvent(event)) {
      // A child created meanwhile that shares this mm: wait for its attach stop too (it
      // writes CLONE_CHILD_SETTID before that, in schedule_tail). kcmp(2) KCMP_VM says whether
      // it shares the mm; it is 0 when both use the same one. A child the tracer knows already
      // (its attach stop came first and it was adopted, ptrace(2) gives no order between the
      // two) was awaited from the start, has reported, or is the caller itself.
      auto msg = GetEventMsg(tid);
      if (!msg.ok()) continue;
      const auto child = static_cast<pid_t>(*msg);
      if (child != caller.tid && FindTask(child) == nullptr && !LastHeldStatus(freeze, child) &&
          syscall(SYS_kcmp, tid, child, KCMP_VM, 0, 0) == 0)
        awaited.insert(child);
    }
  }
}

// Removes from `awaited` the tasks that need not report a stop: see the file comment.
void Tracer::DropUnneeded(const Freeze& freeze, std::set<pid_t>& awaited, bool check_all) {
  for (auto it = awaited.begin(); it != awaited.end();) {
    const Task* task = FindTask(*it);
    bool needless = false;
    if (task != nullptr && task->exiting) {
      needless = HasLeftItsMm(*it);
    } else if (task != nullptr && task->vfork_child != 0) {
      needless = VforkBlocked(*task, freeze, 0);
    }
    if (!needless && check_all) needless = HasLeftItsMm(*it);
    it = needless ? awaited.erase(it) : std::next(it);
  }
}

// Whether `parent`, asleep in wait_for_vfork_done, stays there: its child has not released the
// mm (mm_release runs in exec_mmap and exit_mm, both after every ptrace-stop the child can be
// held in except the exec event). The child is the caller (at its seccomp stop), is held at
// another stop, or is itself such a vfork parent.
bool Tracer::VforkBlocked(const Task& parent, const Freeze& freeze, int depth) const {
  const pid_t child = parent.vfork_child;
  if (child == 0 || depth > 64) return false;
  // A child that has exec'd (a new AddressSpace) has released the parent. (The parent's mm,
  // not the freeze's: a parent covered for its fd table alone is in another one.)
  auto it = tasks_.find(child);
  if (it != tasks_.end() && it->second.mm != parent.mm) return false;
  if (child == freeze.caller) return true;
  if (auto last = LastHeldStatus(freeze, child))
    return WIFSTOPPED(*last) && EventOf(*last) != PTRACE_EVENT_EXEC;
  return it != tasks_.end() && VforkBlocked(it->second, freeze, depth + 1);
}

// The last status of `tid` the tracer holds without having handled it: in the freeze, or
// queued for the event loop.
std::optional<int> Tracer::LastHeldStatus(const Freeze& freeze, pid_t tid) const {
  std::optional<int> last;
  for (const auto& [held_tid, status] : freeze.held)
    if (held_tid == tid) last = status;
  if (last) return last;
  for (const auto& [queued_tid, status] : queued_)
    if (queued_tid == tid) last = status;
  return last;
}

// A held PTRACE_EVENT_EXIT stop or death means the process is dying (nothing else ends a task
// that the freeze holds): SIGKILL, or another thread's execve (de_thread). The caller dies too,
// but it may never say so: killed inside its syscall, it can reach exit_mm without a
// syscall-exit or PTRACE_EVENT_EXIT stop (ptrace_stop returns at once with a fatal signal
// pending), and a thread-group leader's death is reported only after every other thread's
// (delay_group_leader) -- which the freeze holds at their own PTRACE_EVENT_EXIT stops. So the
// event loop polls while such a freeze lasts, and ends it once /proc shows the caller past
// exit_mm.
bool Tracer::PollDyingFreezes() {
  bool dying = false;
  std::vector<const Task*> gone;
  for (const auto& [mm, freeze] : freezes_) {
    const bool held_exit =
        std::any_of(freeze.held.begin(), freeze.held.end(), [](const auto& held) {
          return !WIFSTOPPED(held.second) || EventOf(held.second) == PTRACE_EVENT_EXIT;
        });
    if (!held_exit) continue;
    const Task* caller = FindTask(freeze.caller);
    if (caller != nullptr && HasLeftItsMm(freeze.caller))
      gone.push_back(caller);
    else
      dying = true;
  }
  for (const Task* caller : gone) EndFreeze(*caller);
  return dying;
}

void Tracer::EndFreeze(const Task& task) {
  if (freezes_.empty()) return;
  auto it = freezes_.find(task.mm.get());
  if (it == freezes_.end() || it->second.caller != task.tid) return;
  for (const auto& held : it->second.held) queued_.push_back(held);
  freezes_.erase(it);
}

bool Tracer::HoldIfFrozen(pid_t tid, int status) {
  Task* task = FindTask(tid);
  if (task == nullptr) {
    // A new task whose creator's event has not been handled: adopt it now to learn its mm (it
    // waits in its attach stop either way). Deaths and exec events take their usual path.
    if (!WIFSTOPPED(status) || EventOf(status) == PTRACE_EVENT_EXEC) return false;
    task = AdoptEarlyChild(tid);
    if (task == nullptr) return false;
  }
  for (auto& [mm, freeze] : freezes_) {
    if (freeze.caller == tid || !Covers(freeze, *task)) continue;
    freeze.held.emplace_back(tid, status);
    ++stats_.held_stops;
    return true;
  }
  return false;
}

}  // namespace rxp::harness
