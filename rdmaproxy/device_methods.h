// Which methods the host device implements. The kernel builds each device's method table from
// the functions its driver provides and drops a method whose function is missing
// (UAPI_DEF_METHOD_NEEDS_FN, uapi_finalize_disable() in uverbs_uapi.c): rxe on Linux 6.1 has no
// rereg_user_mr, so REREG_MR is gone for it. The kernel looks a method up before it reads
// anything the call carries, so a call of a dropped method gets the same answer whatever it
// carries -- EPROTONOSUPPORT for an ioctl method (ib_uverbs_cmd_verbs() finds no method), and
// EOPNOTSUPP for a legacy command, written or through INVOKE_WRITE (the table's
// ib_uverbs_notsupp() handler). The proxy refuses some calls before the kernel sees them (a
// handle the file does not own, unreadable memory); for a dropped method it must answer as
// the kernel does, so it asks the device.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "abi/schema.h"
#include "rdmaproxy/embedder.h"

namespace rxp::proxy {

class DeviceMethods {
 public:
  explicit DeviceMethods(uint32_t driver_id) : driver_id_(driver_id) {}

  // Whether `host` implements ioctl method `m`: a call with no attributes, which the kernel
  // answers EINVAL (a mandatory attribute is missing, ib_uverbs_run_method()) before any
  // handler runs, or EPROTONOSUPPORT (no such method). Only for methods with a mandatory
  // attribute: for the others the call would run the handler. nullopt: cannot tell.
  std::optional<bool> Implements(HostDevice& host, const abi::Method& m);
  // Whether `host` implements legacy command `wc`: an INVOKE_WRITE of it with no request, which
  // the kernel answers ENOSPC (shorter than the request struct) before the handler runs, or
  // EOPNOTSUPP (the notsupp handler, whose request size is 0) -- rdma-core's own probe.
  std::optional<bool> Implements(HostDevice& host, const abi::WriteCommand& wc);

  size_t probes() const { return probes_; }

 private:
  std::optional<bool> Probe(HostDevice& host, uint64_t key, void* request, int implemented,
                            int missing);

  uint32_t driver_id_;
  std::unordered_map<uint64_t, bool> known_;  // answers, once per method
  size_t probes_ = 0;
};

}  // namespace rxp::proxy
