// What the harness's own seccomp filters return for one syscall, computed in the tracer.
//
// A seccomp stop reports SECCOMP_RET_DATA of the filter that won, and that need not be one of
// the harness's: the program may install filters of its own (it runs with NO_NEW_PRIVS, so it
// can, unprivileged), and when two filters return SECCOMP_RET_TRACE the most recently installed
// one's data is reported (kernel/seccomp.c seccomp_run_filters keeps the first of equal
// actions, newest first). A program could thus tag an ioctl on a proxied fd with a number the
// tracer does not dispatch, or with another rule's tag. So the tracer does not take the tag on
// trust: it runs its own compiled programs on the stopped call's seccomp_data, exactly as the
// kernel would, and dispatches on what they return.
//
// The interpreter runs the classic-BPF subset seccomp accepts (seccomp_check_filter: loads of
// struct seccomp_data words, the scratch memory, ALU, conditional jumps, RET). The programs it
// runs are the harness's own, which the kernel has already validated; an instruction outside
// the subset, a jump out of the program or a load out of seccomp_data ends the run with
// SECCOMP_RET_KILL_PROCESS, as the kernel would never have installed such a program.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <initializer_list>
#include <span>

#include "tools/harness/seccomp_filter.h"

namespace rxp::harness {

// The value one program returns for `data` (an action with its SECCOMP_RET_DATA).
uint32_t RunSeccompProgram(std::span<const sock_filter> insns, const seccomp_data& data);

// The action a thread with these filters gets for `data`, newest filter first (null entries are
// skipped): the highest-precedence action wins, and among equal actions the newest filter's
// value (seccomp_run_filters). No filter: SECCOMP_RET_ALLOW.
uint32_t RunSeccompStack(std::initializer_list<const BpfProgram*> newest_first,
                         const seccomp_data& data);

// SECCOMP_RET_ACTION_FULL of a value, as the kernel orders them: lower runs first
// (SECCOMP_RET_KILL_PROCESS is 0x80000000, negative as an s32, so it outranks everything).
inline int32_t SeccompActionRank(uint32_t value) {
  return static_cast<int32_t>(value & SECCOMP_RET_ACTION_FULL);
}

}  // namespace rxp::harness
