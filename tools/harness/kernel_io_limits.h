// The kernel's limits on one I/O call, which the harness applies where it does a call's work
// itself (a NETLINK_RDMA receive it answers, a process_vm_writev it checks): the same call
// must fail, or be cut short, where the kernel's would.
#pragma once

#include <climits>
#include <cstdint>

namespace rxp::harness {

// include/uapi/linux/uio.h UIO_MAXIOV: the most iovecs (and recvmmsg entries, __sys_recvmmsg())
// one call takes; more are EINVAL or EMSGSIZE before any is read.
inline constexpr uint64_t kUioMaxIov = 1024;

// include/linux/fs.h MAX_RW_COUNT: the most bytes one read or write moves; longer lengths are
// clamped to it, not refused.
inline constexpr uint64_t kMaxRwCount = INT_MAX & ~uint64_t{4095};

}  // namespace rxp::harness
