// MappingOf: what a process's mappings are over a range of its address space, as /proc/<pid>/maps says (proc(5)).
//
// Why: in the harness the program issues the syscalls that pin memory (REG_MR.start, a
// driver's CQ/QP buffers), and the proxy refuses a range the kernel could not pin before the
// kernel sees it (EFAULT, as ib_umem_get would answer). A range that is mapped but not
// readable is told apart: a peer-memory client (nvidia-peermem) pins GPU memory whose
// addresses CUDA reserves with PROT_NONE mappings (tools/engine_handlers.cc,
// TraceeAppMemory). Reading the maps text costs time in
// proportion to the process's mappings -- about 0.4 ms under TCG for an rdma-core program's
// 127 lines, milliseconds natively for a PyTorch process's thousands -- on every such command.
// Linux 6.11's PROCMAP_QUERY ioctl on the same file (fs/proc/task_mmu.c, do_procmap_query)
// answers "which mapping holds this address" directly; older kernels answer ENOTTY, and the
// text is read instead, with the same result.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rxp::harness {

enum class MapsLookup {
  kAuto,  // PROCMAP_QUERY where the kernel has it, else the text
  kText,  // always the text (tests compare the two)
};

// What lies under [address, address + length) in process `pid`.
enum class RangeMapping {
  kReadable,    // mappings with VM_READ ("r" in the maps text), with no hole between them
  kUnreadable,  // mappings with no hole between them, some without VM_READ (PROT_NONE)
  kHole,        // a byte in no mapping; also an empty or overflowing range, a process that is
                // gone, or a maps file the caller may not open
};
RangeMapping MappingOf(pid_t pid, uint64_t address, uint64_t length,
                       MapsLookup how = MapsLookup::kAuto);

// Whether any byte of [address, address + length) is mapped in process `pid` (from the maps
// text): do_mmap()'s find_vma_intersection() test for MAP_FIXED_NOREPLACE (EEXIST). False for
// an empty or overflowing range, or a process that is gone.
bool AnyMapped(pid_t pid, uint64_t address, uint64_t length);

// Whether this kernel answered PROCMAP_QUERY (false before the first query, and on kernels
// before 6.11).
bool ProcmapQueryAnswered();

}  // namespace rxp::harness
