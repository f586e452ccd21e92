#include "abi/ucma_decoder.h"

#include <cstring>

#include "abi/write_decoder.h"

namespace rxp::abi {

Result<UcmaRequest> DecodeUcmaWrite(std::span<const std::byte> buf) {
  UcmaRequest r;
  if (buf.size() < sizeof(rdma_ucm_cmd_hdr))
    return Fail(EINVAL, "rdma_cm write of {} bytes is shorter than the command header",
                buf.size());
  std::memcpy(&r.header, buf.data(), sizeof(r.header));
  // ucma_write(): cmd beyond the table -> EINVAL; in + header beyond the write -> EINVAL;
  // a NULL handler (GET_OPTION) -> ENOSYS.
  const UcmaCommand* c = FindUcmaCommand(r.header.cmd);
  if (c == nullptr)
    return Fail(EINVAL, "unknown rdma_cm command {}", r.header.cmd);
  if (size_t{r.header.in} + sizeof(rdma_ucm_cmd_hdr) > buf.size())
    return Fail(EINVAL, "rdma_cm {}: in = {} exceeds the {}-byte write", c->short_name,
                r.header.in, buf.size());
  if (c->request == nullptr)
    return Fail(ENOSYS, "rdma_cm {}: {}", c->short_name, c->policy.reason);
  r.command = c;
  r.body = buf.subspan(sizeof(rdma_ucm_cmd_hdr), r.header.in);
  // The kernel copies sizeof(cmd) bytes whatever `in` says (reading past the app's request);
  // the proxy insists the request is all there.
  if (r.body.size() < c->req_size)
    return Fail(EINVAL, "rdma_cm {}: request is {} bytes, needs {}", c->short_name,
                r.body.size(), c->req_size);
  if (const Field* resp = c->request->Find("response"); resp != nullptr) {
    if (r.header.out < c->resp_min && !c->out_unchecked)
      return Fail(ENOSPC, "rdma_cm {}: out = {} is smaller than the {}-byte response",
                  c->short_name, r.header.out, c->resp_min);
    r.response = ReadField(r.body, resp->offset, resp->size);
    // An unchecked `out`: the kernel writes exactly its response, whatever `out` says.
    r.response_len = c->out_unchecked ? c->resp_min : r.header.out;
  }
  return r;
}

}  // namespace rxp::abi
