// RLIMIT_NOFILE against the reserved fd range: the tracer's half of nofile_limit.h.
#include <sys/resource.h>
#include <sys/syscall.h>

#include <span>

#include "tools/harness/nofile_limit.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {

// setrlimit(RLIMIT_NOFILE, new) / prlimit64(pid, RLIMIT_NOFILE, new, old): a hard limit below
// the range's end would leave no room for a proxied fd ever again, so the kernel is handed a
// copy with the hard limit kept at that end (from a scratch slot the program cannot write);
// the soft limit is set as asked. prlimit64 of a process outside the traced tree runs as
// issued, and so does a request the kernel refuses anyway.
Tracer::Verdict Tracer::OnNofileLimit(const Stop& stop) {
  Task& task = stop.task;
  const bool prlimit64 = stop.nr == SYS_prlimit64;
  const size_t new_arg = prlimit64 ? 2 : 1;
  if (prlimit64) {
    const auto pid = static_cast<pid_t>(stop.args[0]);
    if (pid != 0 && FindTask(pid) == nullptr) return Verdict::Continue();
  }
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  auto requested = memory.ReadValue<rlimit>(stop.args[new_arg]);
  if (!requested.ok()) return Verdict::Continue();  // the kernel answers EFAULT
  const std::optional<rlimit> kept = HardLimitKeepingRange(*requested, options_.range);
  if (!kept) return Verdict::Continue();
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
  Verdict verdict = Verdict::WatchExit([](ExitStop&, long result) { return result; });
  verdict.new_args[new_arg] = *slot;
  verdict.release_slot = true;
  return verdict;
}

}  // namespace rxp::harness
