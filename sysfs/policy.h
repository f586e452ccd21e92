// What a sandbox sees of the parts of /sys the snapshot does not describe.
//
// The synthesized tree owns /sys: a path the tree does not contain is hidden (ENOENT), except
// below the passthrough prefixes listed here, whose contents are the host's own, served by
// the embedder. The list is short on purpose: it is what ordinary programs need and what
// carries no device identity. docs/sysfs.md explains each entry; docs/threat-model.md what
// the rest hides.
#pragma once

#include <span>
#include <string_view>

namespace rxp::sysfs {

enum class PathClass {
  kSynthesized,  // served from the synthesized tree; absent from it means hidden (ENOENT)
  kPassthrough,  // the host's file: the embedder serves it from the real /sys
  kNotSysfs,     // not below /sys at all
};

struct PassthroughRule {
  std::string_view path;  // absolute, below /sys
  std::string_view why;   // who needs it
};

// One line per prefix, in the order docs/sysfs.md lists them.
inline constexpr PassthroughRule kPassthroughRules[] = {
    {"/sys/devices/system/cpu",             "CPU topology and online set: glibc get_nprocs(), hwloc, NCCL affinity"},
    {"/sys/fs/cgroup",                      "the sandbox's own cgroup limits (runtimes size pools from them)"},
    {"/sys/kernel/mm/transparent_hugepage", "THP mode, read by allocators (jemalloc, PyTorch's caching allocator)"},
    {"/sys/kernel/mm/hugepages",            "hugepage pools (rdma-core RDMAV_HUGEPAGES_SAFE, DPDK)"},
};

// Classifies an absolute, normalized path ("/sys/class/net/eth0"; no ".", "..", "//").
PathClass ClassifyPath(std::string_view path);

}  // namespace rxp::sysfs
