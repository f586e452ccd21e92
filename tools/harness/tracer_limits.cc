// RLIMIT_NOFILE against the reserved fd range: the tracer's half of nofile_limit.h.
//
// A hard limit the program lowers below the range's end is kept at that end in the kernel, and
// the tracer remembers the value set (nofile_hard_): the process gets the nofile filter, whose
// stops show that value to its queries, and a later raise above it is refused with EPERM as
// the kernel would refuse it -- so the program sees its limits as natively, while its proxied
// fds still have room.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "tools/harness/nofile_limit.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

// CAP_SYS_RESOURCE, include/uapi/linux/capability.h.
constexpr int kCapSysResource = 24;

// Whether the harness holds CAP_SYS_RESOURCE in the initial user namespace, which raising a
// hard limit takes (do_prlimit: capable()). Asked once, of a child: it lowers its RLIMIT_CORE
// hard limit to 0, then raises it to 1.
bool HarnessMayRaiseHardLimits() {
  static const bool may = SucceedsInChild([] {
    const rlimit zero{0, 0};
    const rlimit one{0, 1};
    return setrlimit(RLIMIT_CORE, &zero) == 0 && setrlimit(RLIMIT_CORE, &one) == 0;
  });
  return may;
}

// At the exit of a call of thread `tid` that read RLIMIT_NOFILE into its struct rlimit at
// `at`: the hard limit shown is the one the process set, not the one the kernel holds for it.
long ShowHardLimitSet(pid_t tid, AddressSpace& mm, uint64_t at, rlim_t hard, long result) {
  if (result == 0) {
    ProcessMemory caller(tid, &mm.mem_fd());
    (void)caller.WriteValue(at + offsetof(rlimit, rlim_max), hard);
  }
  return result;
}

// Whether thread `tid` may raise a hard limit: CAP_SYS_RESOURCE in its effective set
// (/proc/<tid>/status CapEff), in the harness's user namespace (in one of its own the
// capability is not the initial namespace's), with the harness holding it there. A program
// gains no capability the harness lacks: no_new_privs is set on it.
bool MayRaiseHardLimit(pid_t tid) {
  if (!HarnessMayRaiseHardLimits()) return false;
  const std::string proc = "/proc/" + std::to_string(tid);
  std::error_code own_error, its_error;
  if (std::filesystem::read_symlink("/proc/self/ns/user", own_error) !=
          std::filesystem::read_symlink(proc + "/ns/user", its_error) ||
      own_error || its_error)
    return false;
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0)
      return ((std::strtoull(line.c_str() + 7, nullptr, 16) >> kCapSysResource) & 1) != 0;
  return false;
}

}  // namespace

std::optional<pid_t> Tracer::LimitTarget(const Stop& stop) {
  if (stop.nr != SYS_prlimit64 || static_cast<pid_t>(stop.args[0]) == 0) return stop.task.tgid;
  const Task* target = FindTask(static_cast<pid_t>(stop.args[0]));
  if (target == nullptr) return std::nullopt;
  return target->tgid;
}

// setrlimit(RLIMIT_NOFILE, new) / prlimit64(pid, RLIMIT_NOFILE, new, old): a hard limit below
// the range's end would leave no room for a proxied fd ever again, so the kernel is handed a
// copy with the hard limit kept at that end (from a scratch slot the program cannot write);
// the soft limit is set as asked. Once the process has set such a limit, a new hard limit
// above it is EPERM without CAP_SYS_RESOURCE, and prlimit64's old limit shows it. prlimit64
// of a process outside the traced tree runs as issued, and so does a request the kernel
// refuses anyway.
Tracer::Verdict Tracer::OnNofileLimit(const Stop& stop) {
  Task& task = stop.task;
  const bool prlimit64 = stop.nr == SYS_prlimit64;
  const size_t new_arg = prlimit64 ? 2 : 1;
  const std::optional<pid_t> target = LimitTarget(stop);
  if (!target) return Verdict::Continue();
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  auto requested = memory.ReadValue<rlimit>(stop.args[new_arg]);
  if (!requested.ok()) return Verdict::Continue();  // the kernel answers EFAULT
  const auto set = nofile_hard_.find(*target);
  const std::optional<rlim_t> before =
      set != nofile_hard_.end() ? std::optional<rlim_t>(set->second) : std::nullopt;
  // do_prlimit: a soft limit above the new hard one is EINVAL first (the kernel says so);
  // then a hard limit above the current one takes CAP_SYS_RESOURCE -- above the one set.
  if (before && requested->rlim_cur <= requested->rlim_max && requested->rlim_max > *before &&
      !MayRaiseHardLimit(task.tid)) {
    options_.log->Trace("[pid {}] RLIMIT_NOFILE hard limit {} above the {} set: EPERM", task.tid,
                        requested->rlim_max, *before);
    return Verdict::Skip(-EPERM);
  }
  const std::optional<rlimit> kept = HardLimitKeepingRange(*requested, options_.range);
  if (!kept && !before) return Verdict::Continue();
  const uint64_t old_at = prlimit64 ? stop.args[3] : 0;
  Verdict verdict = Verdict::WatchExit(
      [this, tgid = *target, before, asked = requested->rlim_max, keeps = kept.has_value(),
       old_at](ExitStop& exit, long result) {
        if (result != 0) return result;
        if (before && old_at != 0)
          ShowHardLimitSet(exit.task().tid, *exit.task().mm, old_at, *before, result);
        if (!keeps) {
          nofile_hard_.erase(tgid);  // at or above the range's end: the kernel holds it as set
          return result;
        }
        nofile_hard_[tgid] = asked;
        EnsureNofileFilter(exit, tgid);
        return result;
      });
  if (!kept) return verdict;
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok()) return Deny(stop, Fail(slot.error().errnum, "cannot keep RLIMIT_NOFILE: {}",
                                         slot.error().reason));
  if (auto written = memory.WriteForced(*slot, std::as_bytes(std::span<const rlimit, 1>(&*kept, 1)));
      !written.ok()) {
    task.mm->ReleaseSlot(task.tid);
    return Deny(stop, Fail(written.error().errnum, "cannot keep RLIMIT_NOFILE: {}",
                           written.error().reason));
  }
  options_.log->Trace("[pid {}] RLIMIT_NOFILE hard limit {} kept at {}: the reserved fd range {}",
                      task.tid, requested->rlim_max, kept->rlim_max, options_.range.ToString());
  verdict.new_args[new_arg] = *slot;
  verdict.release_slot = true;
  return verdict;
}

// getrlimit(RLIMIT_NOFILE) / prlimit64(pid, RLIMIT_NOFILE, NULL, old), in a process with the
// nofile filter: the kernel reports the hard limit it holds, and the program is shown the one
// it set.
Tracer::Verdict Tracer::OnNofileQuery(const Stop& stop) {
  const std::optional<pid_t> target = LimitTarget(stop);
  if (!target) return Verdict::Continue();
  const auto set = nofile_hard_.find(*target);
  if (set == nofile_hard_.end()) return Verdict::Continue();  // raised back since
  const uint64_t out = stop.nr == SYS_prlimit64 ? stop.args[3] : stop.args[1];
  return Verdict::WatchExit([hard = set->second, out](ExitStop& exit, long result) {
    return ShowHardLimitSet(exit.task().tid, *exit.task().mm, out, hard, result);
  });
}

// The process that set the limit gets the filter now, at the exit of its call, before it can
// query; another one (prlimit64 of a process in the tree) at its next stop.
void Tracer::EnsureNofileFilter(ExitStop& stop, pid_t tgid) {
  if (options_.nofile_filter == nullptr || nofile_filtered_.count(tgid) != 0) return;
  if (tgid != stop.task().tgid) {
    nofile_filter_pending_.insert(tgid);
    return;
  }
  if (auto added = AddFilterAtExit(stop, *options_.nofile_filter, "nofile filter"); !added.ok()) {
    options_.log->Error("[pid {}] {}: its RLIMIT_NOFILE queries show the hard limit kept ({})",
                        tgid, added.error().ToString(), options_.range.end());
    return;
  }
  nofile_filtered_.insert(tgid);
  nofile_filter_pending_.erase(tgid);
}

bool Tracer::InstallPendingNofileFilter(Task& task) {
  return InstallPendingFilter(task, *options_.nofile_filter, "nofile filter",
                              nofile_filter_pending_,
                              [this](Task& t) { nofile_filtered_.insert(t.tgid); });
}

}  // namespace rxp::harness
