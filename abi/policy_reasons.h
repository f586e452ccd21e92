// The default policies shared by many schema entries, with the errno the proxy returns and the
// reason it logs. One place, so docs/ABI.md and the logs say the same thing.
#pragma once

#include <cerrno>

#include "abi/schema.h"

namespace rxp::abi::policies {

inline constexpr Policy kAllow{Disposition::kAllow, 0, {}};
// The kernel has no handler (uapi_get_method: write_methods[n] is -EOPNOTSUPP).
inline constexpr Policy kNoKernelHandler{Disposition::kUnsupported, EOPNOTSUPP,
                                         "the kernel implements no handler for this command"};
// EPERM: what an unprivileged caller gets from the kernel for these (rdma_uattrs_has_raw_cap).
inline constexpr Policy kFlowSteering{
    Disposition::kDeny, EPERM,
    "flow steering needs CAP_NET_RAW on the host and can redirect other tenants' traffic"};
// EPROTONOSUPPORT: rdma-core treats it as "method not supported" and falls back or degrades.
inline constexpr Policy kDevx{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 DEVX sends raw firmware commands (PRM) that bypass verbs and the proxy's checks"};
inline constexpr Policy kDevxUmem{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 DEVX UMEM pins memory for raw firmware objects the proxy cannot track"};
inline constexpr Policy kDevxFd{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 DEVX event and async-command fds only serve denied DEVX objects"};
inline constexpr Policy kVar{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 VAR (virtio doorbells) is for vDPA, not verbs; mapping it exposes device BAR pages"};
inline constexpr Policy kPacketPacing{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 packet pacing programs device-global rate-limit entries shared by all tenants"};
inline constexpr Policy kMlx5FlowSteering{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 flow steering (matchers, flows, actions, anchors) rewrites NIC forwarding tables"};
inline constexpr Policy kMlx5QueryPort{
    Disposition::kDeny, EPROTONOSUPPORT,
    "mlx5 QUERY_PORT reveals e-switch vport ids and steering ICM addresses of the host"};
inline constexpr Policy kDataDirectPath{
    Disposition::kDeny, EPROTONOSUPPORT,
    "returns a host sysfs path of the data-direct device; the sandbox sees a synthesized /sys"};
inline constexpr Policy kEsp{
    Disposition::kDeny, EPROTONOSUPPORT,
    "IPsec ESP flow actions were removed from the kernel; ENCAP carries a user-pointer list"};
inline constexpr Policy kCounters{
    Disposition::kDeny, EPROTONOSUPPORT,
    "flow counters only attach to flow-steering rules, which are denied"};

}  // namespace rxp::abi::policies
