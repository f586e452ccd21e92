#include "rdmaproxy/device_methods.h"

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include <algorithm>
#include <cerrno>

#include "abi/uapi.h"

namespace rxp::proxy {
namespace {

constexpr uint64_t kWriteKey = uint64_t{1} << 32;  // legacy commands; ioctl: object << 16 | id

}  // namespace

std::optional<bool> DeviceMethods::Probe(HostDevice& host, uint64_t key, void* request,
                                         int implemented, int missing) {
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  ++probes_;
  auto r = host.Ioctl(RDMA_VERBS_IOCTL, request);
  if (r) return std::nullopt;  // not a probe's answer: leave it unknown
  const int errnum = r.error().errnum;
  if (errnum != implemented && errnum != missing) return std::nullopt;
  return known_[key] = errnum == implemented;
}

std::optional<bool> DeviceMethods::Implements(HostDevice& host, const abi::Method& m) {
  if (std::none_of(m.attrs.begin(), m.attrs.end(), [](const abi::Attr& a) { return a.mandatory; }))
    return std::nullopt;
  abi::IoctlHeader header{};
  header.length = sizeof(header);
  header.object_id = m.object;
  header.method_id = m.id;
  header.driver_id = driver_id_;
  return Probe(host, uint64_t{m.object} << 16 | m.id, &header, EINVAL, EPROTONOSUPPORT);
}

std::optional<bool> DeviceMethods::Implements(HostDevice& host, const abi::WriteCommand& wc) {
  struct {
    abi::IoctlHeader header;
    ib_uverbs_attr write_cmd;
  } request{};
  request.header.length = sizeof(request);
  request.header.object_id = UVERBS_OBJECT_DEVICE;
  request.header.method_id = UVERBS_METHOD_INVOKE_WRITE;
  request.header.num_attrs = 1;
  request.header.driver_id = driver_id_;
  request.write_cmd.attr_id = UVERBS_ATTR_WRITE_CMD;  // fill_attr_const_in(): a u64, inline
  request.write_cmd.len = sizeof(uint64_t);
  request.write_cmd.data = wc.command;
  return Probe(host, kWriteKey | wc.command, &request, ENOSPC, EOPNOTSUPP);
}

}  // namespace rxp::proxy
