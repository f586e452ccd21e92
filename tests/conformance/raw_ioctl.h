// Hand-built RDMA_VERBS_IOCTL requests, shared by the conformance programs that send commands
// rdma-core would not (rxp_verbs_exercise's error paths, rxp_hostile's malformed input): the
// header and attribute array ib_uverbs_ioctl() in drivers/infiniband/core/uverbs_ioctl.c reads.
#pragma once

#include <sys/ioctl.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "abi/testing/request_builder.h"

namespace rxp_conformance {

inline ib_uverbs_attr Attr(uint16_t id, uint16_t len, uint64_t data,
                           uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
  return rxp::abi::testing::MakeAttr(id, len, data, flags);
}

// The request's bytes: an ib_uverbs_ioctl_hdr whose length and num_attrs are the truth, then
// `attrs` (callers that lie about either edit the header afterwards).
inline std::vector<unsigned char> Request(uint16_t object, uint16_t method, uint32_t driver_id,
                                          const std::vector<ib_uverbs_attr>& attrs) {
  rxp::abi::testing::IoctlBuilder request(object, method, driver_id);
  for (const ib_uverbs_attr& a : attrs) request.Raw(a);
  const std::vector<std::byte> bytes = request.Build();
  const auto* first = reinterpret_cast<const unsigned char*>(bytes.data());
  return {first, first + bytes.size()};
}

// RDMA_VERBS_IOCTL on `fd` with the request at `arg`: 0 or errno.
inline int Ioctl(int fd, void* arg) { return ioctl(fd, RDMA_VERBS_IOCTL, arg) == 0 ? 0 : errno; }

inline int RawIoctl(int fd, uint16_t object, uint16_t method, uint32_t driver_id,
                    const std::vector<ib_uverbs_attr>& attrs) {
  auto request = Request(object, method, driver_id, attrs);
  return Ioctl(fd, request.data());
}

// The device's uverbs driver id (enum rdma_driver_id): the one a harmless QUERY_PORT accepts,
// since ib_uverbs_cmd_verbs() answers EINVAL to any other.
inline uint32_t DriverIdOf(int cmd_fd) {
  for (uint32_t id : {14u /* rxe */, 1u /* mlx5 */, 18u, 17u, 9u, 6u, 13u, 19u}) {
    ib_uverbs_query_port_resp_ex resp{};
    int err = RawIoctl(cmd_fd, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, id,
                       {Attr(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1),
                        Attr(UVERBS_ATTR_QUERY_PORT_RESP, sizeof(resp),
                             reinterpret_cast<uint64_t>(&resp))});
    if (err != EINVAL) return id;
  }
  return 0;
}

}  // namespace rxp_conformance
