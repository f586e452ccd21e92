// Routes by which a traced program could have its syscalls skip the tracer's checks: seccomp
// filters it installs itself, children it would create untraced, and remap_file_pages.
//
// The program runs with NO_NEW_PRIVS (the harness's filter needs it), so it may stack filters
// of its own, and the kernel runs them all and takes the highest-precedence action
// (kernel/seccomp.c seccomp_run_filters):
//   * two RET_TRACEs: the newest filter's data is what the tracer reads, so the program's filter
//     can relabel an ioctl on a proxied fd, or a path lookup, with a tag the tracer would not
//     dispatch. The tracer therefore runs its own filters on the call (seccomp_run.h) and
//     dispatches on their answer; where they allow the call, the stop is the program's alone
//     and gets what the kernel gives a RET_TRACE with no tracer attached: ENOSYS.
//   * RET_USER_NOTIF outranks RET_TRACE, and a listener that answers
//     SECCOMP_USER_NOTIF_FLAG_CONTINUE has the call run with no stop at all. A listener is
//     created only with the filter (SECCOMP_FILTER_FLAG_NEW_LISTENER), and that is refused.
// clone(CLONE_UNTRACED) makes a child the tracer is not attached to (kernel_clone: no
// PTRACE_EVENT_* is reported for it); it keeps the filters, so its own stopped calls fail
// (ENOSYS), but it could trace a child of its own and resume that child's stops itself. It is
// refused; clone3, whose flags the filter cannot read, is ENOSYS in the filter.
//
// remap_file_pages (mm/mmap.c) takes no fd: it calls do_mmap again on the file of an existing
// shared mapping with an offset of the caller's choosing. On a uverbs mapping that runs the
// driver's mmap (mlx5_ib_mmap, rxe_mmap) on an offset the proxy never checked. The call has
// been deprecated since Linux 3.16 and nothing in rdma-core uses it; a process with the device
// filter (one that holds or held proxied fds) is refused it.
//
// The scratch region's read-only half (address_space.h) is what keeps a validated copy (a
// write() command, a netlink request, a redirected path) from changing before the kernel reads
// it. Where the kernel has no mseal(2) the region sits at a fixed window, and the calls that
// could make it writable or map something else over it stop (BuildBaseRules): one whose range
// reaches the region is refused with EPERM, mseal's own answer.
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>

#include "tools/harness/seccomp_run.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {

std::optional<Intercept> Tracer::OwnIntercept(const Task& task, const SyscallInfo& info) const {
  if (options_.base_filter == nullptr) return static_cast<Intercept>(info.ret_data);
  seccomp_data data{};
  data.nr = static_cast<int>(info.nr);
  data.arch = info.arch;
  data.instruction_pointer = info.instruction_pointer;
  for (size_t i = 0; i < 6; ++i) data.args[i] = info.args[i];
  // Both of the harness's filters, whether or not this process has the device filter yet: a
  // call it would stop is handled as if it had (the handlers let an fd they do not proxy go),
  // so a gap in the tracer's model of who has the filter cannot turn a real stop into ENOSYS.
  // The guard filter only where the process has it: elsewhere a RET_TRACE on those calls is
  // the program's own. It ranks as the oldest whenever it was added: an mmap of a proxied fd
  // that both stop is the fd's call (OnFdSyscall, which runs the guard's check too), as it is
  // where the guard rules are in the base filter.
  const BpfProgram* guard =
      guard_filtered_.count(task.tgid) != 0 ? options_.guard_filter : nullptr;
  // The nofile filter's rules overlap no other filter's.
  const BpfProgram* nofile =
      nofile_filtered_.count(task.tgid) != 0 ? options_.nofile_filter : nullptr;
  const uint32_t action =
      RunSeccompStack({nofile, options_.device_filter, options_.base_filter, guard}, data);
  if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_TRACE) return std::nullopt;
  return static_cast<Intercept>(action & SECCOMP_RET_DATA);
}

// A RET_TRACE from the program's own filter on a call the harness's filters allow. The
// program asked for a tracer it does not have (this one is the harness's), so the call fails
// as it would natively with none attached (__seccomp_filter: "ENOSYS these calls if there is
// no tracer attached").
Tracer::Verdict Tracer::OnForeignTrace(const Stop& stop) {
  ++stats_.foreign_trace_stops;
  if (foreign_trace_logged_.insert({stop.task.tgid, stop.nr}).second)
    options_.log->Error(
        "[pid {}] {}: ENOSYS (a seccomp filter of the program's own returned SECCOMP_RET_TRACE; "
        "the harness is the only tracer, so the call fails as with none attached)",
        stop.task.tid, SyscallName(stop.nr));
  return Verdict::Skip(-ENOSYS);
}

// A filter of the program's own. With a listener it is refused: EBUSY is the kernel's answer
// to a second listener in one filter stack (seccomp(2)); here the harness holds the stack's
// interception. Any other installs as usual, and the process (every thread: TSYNC may give it
// to all) is noted as one whose filters may refuse what the tracer injects -- an allow-list
// written before mseal(2) existed kills the program for the seal (EnsureScratch). Noted before
// the call runs: a filter the kernel then rejects only costs the process its seal.
SeccompRequest ClassifySeccomp(long nr, const std::array<uint64_t, 6>& args) {
  const bool strict = nr == SYS_seccomp
                          ? static_cast<uint32_t>(args[0]) == SECCOMP_SET_MODE_STRICT
                          : static_cast<uint32_t>(args[1]) == SECCOMP_MODE_STRICT;
  if (strict) return SeccompRequest::kStrict;
  if (nr == SYS_prctl && static_cast<uint32_t>(args[1]) != SECCOMP_MODE_FILTER)
    return SeccompRequest::kOtherMode;
  if (nr == SYS_seccomp && (args[1] & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0)
    return SeccompRequest::kListener;
  return SeccompRequest::kFilter;
}

Tracer::Verdict Tracer::OnSeccompFilter(const Stop& stop) {
  const SeccompRequest request = ClassifySeccomp(stop.nr, stop.args);
  if (request == SeccompRequest::kStrict) return EnterStrictMode(stop);
  // prctl(PR_SET_SECCOMP) with another mode: the kernel's EINVAL.
  if (request == SeccompRequest::kOtherMode) return Verdict::Continue();
  if (request == SeccompRequest::kListener)
    return Deny(stop, Fail(EBUSY,
                           "a seccomp filter with a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) "
                           "is refused under the harness: its SECCOMP_RET_USER_NOTIF would "
                           "outrank the harness's stops"));
  for (auto& [tid, task] : tasks_)
    if (task.tgid == stop.task.tgid) task.own_filters = true;
  return Verdict::Continue();
}

Tracer::Verdict Tracer::OnUntracedClone(const Stop& stop) {
  return Deny(stop, Fail(EPERM,
                         "CLONE_UNTRACED is refused under the harness: every process of the "
                         "traced tree stays traced"));
}

Tracer::Verdict Tracer::OnScratchGuard(const Stop& stop) {
  const std::optional<uint64_t> base = stop.task.mm->scratch_base();
  if (!base) return Verdict::Continue();
  const uint64_t start = *base, end = *base + AddressSpace::region_size();
  // [addr, addr + length rounded up to pages) meets the region; a range that wraps around
  // does too (the kernel refuses it, but not before the tracer has said no).
  auto reaches = [&](uint64_t addr, uint64_t length) {
    const uint64_t pages = (length + 4095) & ~uint64_t{4095};
    if (pages < length || addr + pages < addr) return true;
    return addr < end && addr + pages > start;
  };
  const auto& a = stop.args;
  bool hit = false;
  switch (stop.nr) {
    case SYS_mremap:  // (old, old_size, new_size, flags, new_address)
      hit = reaches(a[0], a[1]) || ((a[3] & MREMAP_FIXED) != 0 && reaches(a[4], a[2]));
      break;
    case SYS_shmat:  // (id, address, flags): the segment's size is not known here; with no
                     // address SHM_REMAP is the kernel's EINVAL (do_shmat)
      hit = a[1] != 0 && a[1] < end;
      break;
    case SYS_mmap:  // (address, length, prot, flags, ...): only MAP_FIXED replaces memory
      hit = (a[3] & MAP_FIXED) != 0 && reaches(a[0], a[1]);
      break;
    default:  // mprotect, pkey_mprotect, munmap, madvise: (address, length, ...)
      hit = reaches(a[0], a[1]);
      break;
  }
  if (!hit) return Verdict::Continue();
  return Deny(stop, Fail(EPERM,
                         "{} of memory at {:#x} is refused: it reaches the harness's scratch "
                         "region ({:#x}-{:#x}), which holds validated copies of the program's "
                         "commands",
                         SyscallName(stop.nr), a[stop.nr == SYS_shmat ? 1 : 0], start, end));
}

Tracer::Verdict Tracer::OnRemapFilePages(const Stop& stop) {
  return Deny(stop, Fail(EPERM,
                         "remap_file_pages is refused in a process with proxied fds: it would "
                         "map a device offset the proxy never checked"));
}

}  // namespace rxp::harness
