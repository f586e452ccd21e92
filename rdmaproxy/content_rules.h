// Content rules: policy that looks inside commands the entry-level policy allows. One table
// entry per rule (content_rules.cc): what it applies to and what it checks.
//   raw-packet QPs and SOURCE_QPN     need CAP_NET_RAW on the host; denied unless the policy
//                                     sets raw_packet_qps (EPERM, as the kernel answers)
//   mlx5 DEVX contexts                GET_CONTEXT with MLX5_IB_ALLOC_UCTX_DEVX is refused unless
//                                     devx is "query" or "allow" (EINVAL, as on a device
//                                     without DEVX; rdma-core retries without the flag)
//   mlx5 SW-ICM device memory         DM.ALLOC of a steering ICM type is refused (EPERM)
//   DEVX query-only                   with devx "query", DEVX_OTHER may only carry a
//                                     whitelisted read-only PRM opcode
//   ESP encapsulation                 an ESP flow action with ENCAP is refused (EOPNOTSUPP,
//                                     mlx5's answer) under any policy: its user-pointer list
//                                     is never forwarded
#pragma once

#include <cstdint>
#include <span>

#include "abi/ioctl_decoder.h"
#include "abi/payload.h"
#include "abi/result.h"
#include "abi/schema.h"
#include "rdmaproxy/policy.h"

namespace rxp::proxy {

// What a rule may look at: the decoded command and the bytes the proxy copied in.
struct CommandView {
  abi::Driver driver = abi::Driver::kCore;
  const abi::Method* method = nullptr;               // ioctl
  const abi::IoctlRequest* ioctl = nullptr;          // ioctl
  const abi::WriteCommand* write_command = nullptr;  // write(), or what INVOKE_WRITE wraps
  std::span<const std::byte> core;                   // the legacy core request
  std::span<const std::byte> driver_in;              // driver data (UHW_IN or write udata)
  // ioctl: the bytes the proxy copied in for pointer attributes, by app address (no
  // std::function: a view is made for every command).
  const abi::PayloadSource* inputs = nullptr;

  // The copied-in bytes of pointer attribute `attr_id` (empty when absent or inline).
  std::span<const std::byte> AttrBytes(uint16_t attr_id) const;
};

Result<void> CheckContent(const PolicyConfig& policy, const CommandView& view);

}  // namespace rxp::proxy
