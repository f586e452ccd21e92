// What the tracer puts into a tracee's address space and filter stack, by running syscalls in
// it (syscall_injector.h): the scratch region (address_space.h) at the first stop of each new
// mm, and the device filter (intercept_rules.h) when a process gets its first proxied fd.
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

// Where the device filter's program goes in a thread's scratch slot: after the room a
// redirected path needs, so both can be there at once.
constexpr uint64_t kFilterSlotOffset = 8192;

// mseal(2): the same number on every architecture (Linux 6.10; not in every libc's headers).
constexpr long kSysMseal = 462;

constexpr uint64_t kDeviceFilterFlags = SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW;

// The result of an injected seccomp(SET_MODE_FILTER, TSYNC): 0, -errno, or the tid of a
// thread it could not synchronize (seccomp(2)), which is EBUSY here.
Result<void> FilterAdded(long result, std::string_view filter, pid_t tgid) {
  if (result == 0) return Ok();
  return Fail(result < 0 ? static_cast<int>(-result) : EBUSY,
              "cannot add the {} to process {}: seccomp() = {}", filter, tgid, result);
}

}  // namespace

bool SucceedsInChild(bool (*probe)()) {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) _exit(probe() ? 0 : 1);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Whether this kernel has mseal(2) and lets the harness use it: asked once, by sealing a page
// in a child of the harness (ENOSYS before Linux 6.10). A child, because a seccomp filter the
// harness inherited (a container's profile) may answer the call with death rather than an
// errno; the child exits and the answer is "no" either way.
bool KernelSealsMappings() {
  static const bool seals = SucceedsInChild([] {
    void* page = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return page != MAP_FAILED && syscall(kSysMseal, page, 4096, 0) == 0;
  });
  return seals;
}

// 1 MiB, or the lowest address a program may map (vm.mmap_min_addr) rounded up to a MiB:
// below where executables load (0x400000 for non-PIE ones) and far below what the kernel
// places by itself (top-down from mmap_base, and PIE executables at 0x555555554000 upwards).
uint64_t LowScratchBase() {
  constexpr uint64_t kMiB = 1 << 20;
  uint64_t min_addr = 65536;
  std::ifstream("/proc/sys/vm/mmap_min_addr") >> min_addr;
  return std::max(kMiB, (min_addr + kMiB - 1) / kMiB * kMiB);
}

// Runs nr(args) in `task`, which is at a seccomp stop, in place of the syscall it is about to
// make, then makes it issue that syscall again: it passes the filter again and comes back as a
// fresh seccomp stop. Returns the injected call's result, or nullopt when nothing was done
// (the task could not be read; it is still stopped and the caller goes on as usual).
std::optional<Result<long>> Tracer::InjectBeforeSyscall(Task& task, long nr,
                                                        const std::array<uint64_t, 6>& args) {
  return InjectBeforeSyscall(task, [&](const InjectFn& inject) { return inject(nr, args); });
}

std::optional<Result<long>> Tracer::InjectBeforeSyscall(
    Task& task, const std::function<Result<long>(const InjectFn&)>& calls) {
  auto regs = Regs::Get(task.tid);
  if (!regs.ok()) return std::nullopt;
  SyscallInjector injector(task.tid, *regs, SyscallInjector::At::kSeccompStop,
                           &task.deferred_signals, waiter_);
  auto result = calls([&](long nr, const std::array<uint64_t, 6>& args) {
    ++stats_.injected_syscalls;
    return injector.Run(nr, args);
  });
  if (injector.death_status()) {
    reaped_.emplace_back(task.tid, *injector.death_status());
    return result;
  }
  Regs replay = *regs;
  replay.RewindToSyscall(regs->syscall_nr());
  if (replay.Set(task.tid).ok()) Resume(task, ResumeHow::kCont, TakeDeferredSignal(task));
  return result;
}

// The region is mapped read-only to the tracee, then its second half made writable (the
// kernel-writable slots, AddressSpace::KernelSlotOf), then sealed where the kernel can
// (mseal(2), Linux 6.10): the read-only half is what keeps another thread from rewriting a
// validated copy, and without the seal the program could mprotect it writable, munmap it and
// map its own memory there, or zero it with madvise(MADV_DONTNEED) (mm/mseal.c,
// can_modify_vma; the seal is kept across fork, with the vma's flags in dup_mmap). Writes
// through /proc/<pid>/mem still reach a sealed read-only page (FOLL_FORCE): the harness
// refuses to open those files for writing (tracer_path.cc).
//
// Where the kernel has no mseal, or the process has seccomp filters of its own (which may
// kill it for the mseal: an allow-list written before the call existed), the region goes at
// the fixed window instead (TracerOptions::scratch_window), whose filter rules stop what could
// reach it (OnScratchGuard): the base filter's where the kernel has no mseal, else the guard
// filter, added to such a process here (once: kept across fork and exec, like every filter).
// MAP_FIXED_NOREPLACE: a program that has memory there already keeps it, and the region is
// then not used (fail closed, like a refused seal or guard).
bool Tracer::EnsureScratch(Task& task) {
  constexpr uint64_t kNoFd = static_cast<uint64_t>(-1);
  const bool seal = options_.seal_scratch && !task.own_filters && KernelSealsMappings();
  const std::optional<ScratchWindow> window = seal ? std::nullopt : options_.scratch_window;
  const bool guard = window && options_.seal_scratch && options_.guard_filter != nullptr &&
                     guard_filtered_.count(task.tgid) == 0;
  auto addr = InjectBeforeSyscall(task, [&](const InjectFn& inject) -> Result<long> {
    const uint64_t at = window ? window->base : 0;
    const uint64_t fixed = window ? MAP_FIXED_NOREPLACE : 0;
    auto base = inject(SYS_mmap, {at, AddressSpace::region_size(), PROT_READ,
                                  MAP_PRIVATE | MAP_ANONYMOUS | fixed, kNoFd, 0});
    if (!base.ok() || *base < 0) return base;
    if (window && static_cast<uint64_t>(*base) != window->base)
      return Fail(EEXIST, "the kernel placed it at {:#x}, not at {:#x}", *base, window->base);
    auto rw = inject(SYS_mprotect, {static_cast<uint64_t>(*base) + AddressSpace::half_size(),
                                    AddressSpace::half_size(), PROT_READ | PROT_WRITE, 0, 0, 0});
    if (!rw.ok()) return std::move(rw).error();
    if (*rw < 0) return *rw;
    if (seal) {
      // A kernel that has mseal and refuses it here leaves the region unprotected: it is not
      // used then (below).
      auto sealed = inject(kSysMseal, {static_cast<uint64_t>(*base), AddressSpace::region_size(),
                                       0, 0, 0, 0});
      if (!sealed.ok()) return std::move(sealed).error();
      if (*sealed < 0) return *sealed;
    }
    if (guard) {
      // The program is stopped and no slot is in use yet: slot 0's filter room holds the
      // program while the injected seccomp(2) reads it.
      RXP_TRY(InjectFilter(task, static_cast<uint64_t>(*base), *options_.guard_filter,
                           "guard filter of the window", inject));
      guard_filtered_.insert(task.tgid);
    }
    return base;
  });
  if (!addr) return false;
  if (addr->ok() && **addr >= 0) {
    task.mm->SetScratch(static_cast<uint64_t>(**addr));
  } else {
    task.mm->MarkScratchUnavailable();
    options_.log->Error("[pid {}] cannot set up the harness scratch region: {}", task.tgid,
                        addr->ok() ? std::strerror(static_cast<int>(-**addr))
                                   : addr->error().ToString());
  }
  return true;
}

// Strict mode (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT), seccomp(SECCOMP_SET_MODE_STRICT)):
// the kernel refuses it to a thread with filters (seccomp_may_assign_mode), and under the
// harness every thread has some. The call is answered as the kernel would answer it with only
// the program's own filters: EINVAL where it has some (or the harness runs under inherited
// ones) or where the arguments are wrong (do_seccomp: flags and uargs must be 0); otherwise
// it is replaced by the installation of StrictModeFilter for this thread alone (no TSYNC, as
// strict mode is per thread), and from then on the tracer ends the thread at any call strict
// mode forbids (EndStrictViolator).
Tracer::Verdict Tracer::EnterStrictMode(const Stop& stop) {
  Task& task = stop.task;
  if (stop.nr == SYS_seccomp && (stop.args[1] != 0 || stop.args[2] != 0))
    return Verdict::Skip(-EINVAL);
  if (task.own_filters || inherited_filters_) return Verdict::Skip(-EINVAL);
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok())
    return Deny(stop, Fail(slot.error().errnum, "cannot enter strict mode: {}", slot.error().reason));
  auto prog = WriteFilter(task, strict_filter_, *slot + kFilterSlotOffset);
  if (!prog.ok()) {
    task.mm->ReleaseSlot(task.tid);
    return Deny(stop, Fail(prog.error().errnum, "cannot enter strict mode: {}", prog.error().reason));
  }
  Verdict verdict = Verdict::WatchExit([](ExitStop& exit, long result) -> long {
    if (result != 0) return result;
    exit.task().strict = true;
    return 0;
  });
  verdict.new_nr = SYS_seccomp;
  verdict.new_args = {SECCOMP_SET_MODE_FILTER, 0, *prog, 0, 0, 0};
  verdict.release_slot = true;
  return verdict;
}

// A call strict mode forbids: the kernel ends the thread with do_exit(SIGKILL)
// (__secure_computing_strict). A process of one thread is killed with SIGKILL, which gives its
// parent the same status; a thread among others is made to exit(2) instead of its call, as no
// signal ends a single thread (its exit code, which nothing reads, is 0 then).
void Tracer::EndStrictViolator(Task& task, long nr) {
  options_.log->Trace("[pid {}] {} in strict mode: the thread is killed, as SECCOMP_MODE_STRICT does",
                      task.tid, SyscallName(nr));
  auto threads = threads_per_process_.find(task.tgid);
  if (threads != threads_per_process_.end() && threads->second == 1) {
    EndFreeze(task);
    kill(task.tgid, SIGKILL);
    return;  // the tracee dies in its stop; its status follows
  }
  Verdict verdict = Verdict::WatchExit({});
  verdict.new_nr = SYS_exit;
  verdict.new_args[0] = 0;
  ApplyVerdict(task, std::move(verdict));
}

// Copies a filter (a sock_fprog and its instructions) into the tracee at `header`, in the
// filter room of a scratch slot; returns the sock_fprog's address.
Result<uint64_t> Tracer::WriteFilter(Task& task, const BpfProgram& program, uint64_t header) {
  const uint64_t insns = header + 16;
  const auto bytes = std::as_bytes(program.insns());
  if (kFilterSlotOffset + 16 + bytes.size() > kScratchSlotSize)
    return Fail(E2BIG, "a filter of {} instructions does not fit a scratch slot", program.size());
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  RXP_TRY(memory.WriteForced(insns, bytes));
  struct {
    uint16_t len;
    uint16_t pad[3];
    uint64_t filter;
  } fprog{static_cast<uint16_t>(program.size()), {}, insns};  // struct sock_fprog, x86-64
  RXP_TRY(memory.WriteForced(header, std::as_bytes(std::span(&fprog, 1))));
  return header;
}

// The process of `stop`'s thread gets the device filter before its first proxied fd: injected
// seccomp(SET_MODE_FILTER, TSYNC) so every thread of it has the filter (seccomp(2)).
Result<void> Tracer::EnsureDeviceFilter(ExitStop& stop) {
  Task& task = stop.task();
  if (options_.device_filter == nullptr || device_filtered_.count(task.tgid) != 0) return Ok();
  RXP_TRY(AddFilterAtExit(stop, *options_.device_filter, "device filter"));
  NoteDeviceFilter(task);
  return Ok();
}

// At a syscall-exit stop the call is done: the thread's scratch slot (held by the call, or
// taken here for the moment) holds the program while the injected seccomp(2) reads it.
Result<void> Tracer::AddFilterAtExit(ExitStop& stop, const BpfProgram& program,
                                     std::string_view name) {
  Task& task = stop.task();
  const bool held = task.mm->HoldsSlot(task.tid);
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok()) return std::move(slot).error();
  Result<void> added = InjectFilter(task, *slot, program, name,
                                    [&](long nr, const std::array<uint64_t, 6>& args) {
                                      return stop.Inject(nr, args);
                                    });
  if (!held) task.mm->ReleaseSlot(task.tid);
  return added;
}

// Copies `program` into the filter room of the scratch slot at `slot` and has the thread
// install it, for every thread of its process (TSYNC), through `inject`.
Result<void> Tracer::InjectFilter(Task& task, uint64_t slot, const BpfProgram& program,
                                  std::string_view name, const InjectFn& inject) {
  auto prog = WriteFilter(task, program, slot + kFilterSlotOffset);
  if (!prog.ok()) return std::move(prog).error();
  auto added = inject(SYS_seccomp, {SECCOMP_SET_MODE_FILTER, kDeviceFilterFlags, *prog, 0, 0, 0});
  if (!added.ok()) return std::move(added).error();
  return FilterAdded(*added, name, task.tgid);
}

void Tracer::NoteDeviceFilter(Task& task) {
  device_filtered_.insert(task.tgid);
  device_filter_pending_.erase(task.tgid);
  ++stats_.device_filters;
  // Another process sharing this fd table (CLONE_FILES without CLONE_THREAD) has no filter of
  // its own yet: it gets one at its next stop.
  for (const auto& [tid, other] : tasks_)
    if (other.fds == task.fds && device_filtered_.count(other.tgid) == 0)
      device_filter_pending_.insert(other.tgid);
}

// A process about to install its first seccomp filter of its own gets, first, each filter of
// the harness's that it may need later: the device filter, the guard filter (its next scratch
// regions go at the window: EnsureScratch) and the nofile filter. Added after the program's,
// each would be an injected seccomp(2) that an allow-list without it answers with death or
// an errno. The price: such a process runs the fd-range checks and stops for sendmsg and for
// RLIMIT_NOFILE queries from then on. The process is noted as one with filters of its own
// first, so the replayed call does not come here again, whatever the kernel answered. True
// when the thread was resumed: the program's call comes back as a fresh stop.
bool Tracer::AddFiltersAheadOfOwn(Task& task) {
  for (auto& [tid, other] : tasks_)
    if (other.tgid == task.tgid) other.own_filters = true;
  struct Ahead {
    const BpfProgram* program;
    std::set<pid_t>* have;
    std::string_view name;
  };
  const Ahead filters[] = {
      {options_.device_filter, &device_filtered_, "device filter"},
      {options_.seal_scratch ? options_.guard_filter : nullptr, &guard_filtered_, "guard filter"},
      {options_.nofile_filter, &nofile_filtered_, "nofile filter"},
  };
  std::vector<const Ahead*> missing;
  for (const Ahead& f : filters)
    if (f.program != nullptr && f.have->count(task.tgid) == 0) missing.push_back(&f);
  if (missing.empty() || !task.mm->has_scratch()) return false;
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok()) return false;
  auto done = InjectBeforeSyscall(task, [&](const InjectFn& inject) -> Result<long> {
    for (const Ahead* f : missing) {
      if (auto ok = InjectFilter(task, *slot, *f->program, f->name, inject); !ok.ok()) {
        options_.log->Error("[pid {}] ahead of its own seccomp filter: {}", task.tgid,
                            ok.error().ToString());
        continue;
      }
      if (f->have == &device_filtered_) {
        NoteDeviceFilter(task);
      } else {
        f->have->insert(task.tgid);
      }
    }
    return 0L;
  });
  task.mm->ReleaseSlot(task.tid);
  return done.has_value();
}

bool Tracer::InstallPendingDeviceFilter(Task& task) {
  return InstallPendingFilter(task, *options_.device_filter, "device filter",
                              device_filter_pending_, [this](Task& t) { NoteDeviceFilter(t); });
}

// A filter the process is due (it is in `pending`), added before the call of the thread's
// seccomp stop. True when the thread was resumed: the call comes back as a fresh stop. The
// process leaves `pending` whether the kernel took the filter (then `added` runs) or not,
// except when the thread could not be read (it is still stopped; the next stop tries again).
bool Tracer::InstallPendingFilter(Task& task, const BpfProgram& program, std::string_view name,
                                  std::set<pid_t>& pending,
                                  const std::function<void(Task&)>& added) {
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok()) {
    options_.log->Error("[pid {}] cannot add the {}: {}", task.tgid, name, slot.error().ToString());
    pending.erase(task.tgid);
    return false;
  }
  std::optional<Result<void>> ok;
  auto done = InjectBeforeSyscall(task, [&](const InjectFn& inject) -> Result<long> {
    ok = InjectFilter(task, *slot, program, name, inject);
    return 0L;
  });
  task.mm->ReleaseSlot(task.tid);
  if (!done) return false;
  pending.erase(task.tgid);
  if (ok && ok->ok()) {
    added(task);
  } else if (ok) {
    options_.log->Error("[pid {}] {}", task.tgid, ok->error().ToString());
  }
  return true;
}

}  // namespace rxp::harness
