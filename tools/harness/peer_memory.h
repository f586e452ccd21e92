// Whether the host has a peer-memory client: a kernel module that lets ib_umem_get pin memory
// the core cannot (MLNX_OFED's ib_peer_memory API; nvidia-peermem registers GPU memory
// through it). Each registered client has a directory under /sys/kernel/mm/memory_peers
// (nv_mem, nv_mem_nc, ...), which is also what NCCL looks for (docs/sysfs.md).
//
// Why the harness asks: CUDA reserves GPU virtual addresses with PROT_NONE mappings, so an MR
// over GPU memory is a range the program has mapped but cannot read. On a host with a client
// the kernel hands such a range to the clients after pinning fails; elsewhere it answers
// EFAULT, which the harness then gives without forwarding (tools/engine_handlers.cc).
#pragma once

#include <string>

namespace rxp::harness {

// True when `sys_root`/kernel/mm/memory_peers holds an entry. Read on each call: a client
// module may be loaded while a program runs.
bool HostHasPeerMemoryClients(const std::string& sys_root = "/sys");

}  // namespace rxp::harness
