#include "tools/harness/kernel_io_limits.h"
// process_vm_writev from a traced process: no write into a scratch region.
//
// process_vm_writev(pid, local_iov, liovcnt, remote_iov, riovcnt, flags) writes another
// process's memory with the caller's ptrace rights (mm/process_vm_access.c), which a traced
// process has over the others of its tree (same user; Yama's relational scope allows a
// descendant only through the scratch region's own process tree, and scope 0 anyone). The
// writable half of a scratch region holds the engine's validated copy of an ioctl the program
// issues itself while the kernel runs it (KernelScratch); the address-space freeze holds every
// task of that address space, not another process. So a remote range that reaches any traced
// address space's region is refused: the kernel writes up to the region's start, and a call
// that would write nothing before it fails with EFAULT -- what it gets natively, where nothing
// is mapped there (process_vm_rw_core(): the bytes copied before the first fault, or -EFAULT).
// The kernel reads the checked copy of the remote iovecs from the caller's read-only scratch,
// so no other thread can change them after the check.
#include <sys/syscall.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "tools/harness/kernel_io_limits.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

// More remote iovecs are the kernel's EINVAL, before it reads any; the checked copy fits a slot.
static_assert(kUioMaxIov * sizeof(iovec) <= kScratchSlotSize);

}  // namespace

Tracer::Verdict Tracer::OnProcessVmWrite(const Stop& stop) {
  Task& task = stop.task;
  const uint64_t remote_at = stop.args[3];
  const uint64_t count = stop.args[4];
  // The kernel's own EINVALs come before it reads the iovecs (process_vm_rw()).
  if (stop.args[5] != 0 || count > kUioMaxIov || stop.args[2] > kUioMaxIov || count == 0)
    return Verdict::Continue();
  std::set<std::pair<uint64_t, uint64_t>> regions;  // [start, end) of every traced region
  for (const auto& [tid, other] : tasks_)
    if (other.mm != nullptr && other.mm->scratch_base())
      regions.emplace(*other.mm->scratch_base(),
                      *other.mm->scratch_base() + AddressSpace::region_size());
  if (regions.empty()) return Verdict::Continue();

  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  std::vector<iovec> remote(count);
  // Unreadable now is EFAULT, as from the kernel; left to the kernel, another thread could map
  // it between this check and the kernel's read.
  if (!memory.Read(remote_at, std::as_writable_bytes(std::span(remote))).ok())
    return Verdict::Skip(-EFAULT);
  // The first remote range that reaches a region ends the write at the region's start (the
  // lowest one it reaches: the set is in address order).
  uint64_t before = 0;  // bytes the kernel may write ahead of it
  size_t kept = remote.size();
  for (size_t i = 0; i < remote.size() && kept == remote.size(); ++i) {
    const uint64_t start = reinterpret_cast<uint64_t>(remote[i].iov_base);
    const uint64_t len = remote[i].iov_len;
    for (const auto& [region_start, region_end] : regions) {
      // [start, start + len) meets [region_start, region_end), without computing an end that
      // could wrap.
      if (len == 0 || start >= region_end || (start < region_start && region_start - start >= len))
        continue;
      const uint64_t clipped = start < region_start ? region_start - start : 0;
      if (before + clipped == 0)
        return Deny(stop, Fail(EFAULT,
                               "process_vm_writev to pid {} at {:#x}+{} is refused: it reaches "
                               "the harness's scratch region {:#x}-{:#x}, where the kernel "
                               "reads validated commands",
                               static_cast<pid_t>(stop.args[0]), start, len, region_start,
                               region_end));
      options_.log->Error("[pid {}] process_vm_writev to pid {} stops at {:#x} after {} bytes: "
                          "the rest reaches the harness's scratch region {:#x}-{:#x}",
                          task.tid, static_cast<pid_t>(stop.args[0]),
                          std::max(start, region_start), before + clipped, region_start,
                          region_end);
      remote[i].iov_len = clipped;
      kept = i + 1;
      break;
    }
    before += remote[i].iov_len;
  }
  remote.resize(kept);
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok())
    return Deny(stop, Fail(slot.error().errnum, "cannot check process_vm_writev: {}",
                           slot.error().reason));
  if (auto written = memory.WriteForced(*slot, std::as_bytes(std::span(remote))); !written.ok()) {
    task.mm->ReleaseSlot(task.tid);
    return Deny(stop, Fail(written.error().errnum, "cannot check process_vm_writev: {}",
                           written.error().reason));
  }
  Verdict verdict = Verdict::WatchExit({});
  verdict.new_args[3] = *slot;
  verdict.new_args[4] = remote.size();
  verdict.release_slot = true;
  return verdict;
}

}  // namespace rxp::harness
