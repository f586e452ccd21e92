#include "abi/write_decoder.h"

#include <algorithm>
#include <cstring>

namespace rxp::abi {
namespace {

constexpr size_t kHdr = sizeof(ib_uverbs_cmd_hdr);
constexpr size_t kExHdr = sizeof(ib_uverbs_ex_cmd_hdr);

bool AllZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// uverbs_request_next_ptr(): take `len` bytes (computed with size_mul, which saturates) from
// what is left of the request; -ENOSPC when they are not there.
bool Take(size_t& left, uint64_t len) {
  if (len > left) return false;
  left -= static_cast<size_t>(len);
  return true;
}

// POST_SEND / POST_RECV / POST_SRQ_RECV framing (ib_uverbs_post_send,
// ib_uverbs_unmarshall_recv): wr_count WRs of wqe_size bytes, then sge_count SGEs, nothing
// after; every WR's num_sge drawn from the SGE pool.
Result<void> ValidateWrs(const WriteCommand& c, std::span<const std::byte> core, bool send) {
  const size_t header = c.request->size;  // ib_uverbs_post_{send,recv,srq_recv}: 24 bytes
  const auto wr_count = static_cast<uint32_t>(ReadField(core, header - 12, 4));
  const auto sge_count = static_cast<uint32_t>(ReadField(core, header - 8, 4));
  const auto wqe_size = static_cast<uint32_t>(ReadField(core, header - 4, 4));
  const size_t min_wqe = send ? sizeof(ib_uverbs_send_wr) : sizeof(ib_uverbs_recv_wr);
  // The recv path checks wqe_size first, the send path after the framing.
  if (!send && wqe_size < min_wqe)
    return Fail(EINVAL, "{}: wqe_size {} is smaller than a WR ({})", c.short_name, wqe_size,
                min_wqe);
  size_t left = core.size() - header;
  if (!Take(left, uint64_t{wqe_size} * wr_count) ||
      !Take(left, uint64_t{sge_count} * sizeof(ib_uverbs_sge)))
    return Fail(ENOSPC, "{}: {} WRs of {} bytes and {} SGEs do not fit in {} bytes",
                c.short_name, wr_count, wqe_size, sge_count, core.size() - header);
  if (!AllZero(core.last(left)))
    return Fail(EOPNOTSUPP, "{}: {} non-zero bytes after the SGEs", c.short_name, left);
  if (send && wqe_size < min_wqe)
    return Fail(EINVAL, "{}: wqe_size {} is smaller than a WR ({})", c.short_name, wqe_size,
                min_wqe);
  uint64_t sges = 0;
  const size_t num_sge_offset = send ? offsetof(ib_uverbs_send_wr, num_sge)
                                     : offsetof(ib_uverbs_recv_wr, num_sge);
  for (uint32_t i = 0; i < wr_count; ++i) {
    sges += ReadField(core, header + size_t{wqe_size} * i + num_sge_offset, 4);
    if (sges > sge_count)
      return Fail(EINVAL, "{}: WR {} uses more SGEs than the {} provided", c.short_name, i,
                  sge_count);
  }
  return Ok();
}

// EX_CREATE_RWQ_IND_TBL, as ib_uverbs_ex_create_rwq_ind_table() reads it: comp_mask must be
// zero (EOPNOTSUPP), log_ind_tbl_size at most IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE (EINVAL), then
// exactly 1 << log_ind_tbl_size u32 WQ handles (uverbs_request_next: ENOSPC when short) and
// nothing but zeros after them (uverbs_request_finish: EOPNOTSUPP). The 4 bytes rdma-core adds
// after a single handle to fill the last 8-byte word are such zeros, not a requirement.
Result<void> ValidateWqHandles(const WriteCommand& c, std::span<const std::byte> core) {
  ib_uverbs_ex_create_rwq_ind_table cmd;
  std::memcpy(&cmd, core.data(), sizeof(cmd));  // uverbs_request_start: req_size checked
  if (cmd.comp_mask != 0)
    return Fail(EOPNOTSUPP, "{}: comp_mask {:#x} is not zero", c.short_name, cmd.comp_mask);
  if (cmd.log_ind_tbl_size > IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE)
    return Fail(EINVAL, "{}: log_ind_tbl_size {} exceeds {}", c.short_name,
                cmd.log_ind_tbl_size, IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE);
  const size_t handles = size_t{1} << cmd.log_ind_tbl_size;
  size_t left = core.size() - sizeof(cmd);
  if (!Take(left, handles * sizeof(uint32_t)))
    return Fail(ENOSPC, "{}: {} WQ handles need {} bytes after the request, got {}",
                c.short_name, handles, handles * sizeof(uint32_t), core.size() - sizeof(cmd));
  if (!AllZero(core.last(left)))
    return Fail(EOPNOTSUPP, "{}: non-zero bytes after the {} WQ handles", c.short_name, handles);
  return Ok();
}

// EX_CREATE_FLOW (ib_uverbs_ex_create_flow): flow_attr.size bytes of specs follow the struct.
Result<void> ValidateFlowSpecs(const WriteCommand& c, std::span<const std::byte> core) {
  const size_t size = ReadField(
      core, offsetof(ib_uverbs_create_flow, flow_attr) + offsetof(ib_uverbs_flow_attr, size), 2);
  if (size > core.size() - sizeof(ib_uverbs_create_flow))
    return Fail(EINVAL, "{}: flow_attr.size {} exceeds the {} bytes of specs", c.short_name,
                size, core.size() - sizeof(ib_uverbs_create_flow));
  return Ok();
}

}  // namespace

uint64_t ReadField(std::span<const std::byte> bytes, size_t offset, size_t size) {
  uint64_t v = 0;
  if (size > sizeof(v) || offset > bytes.size() || size > bytes.size() - offset) return 0;
  std::memcpy(&v, bytes.data() + offset, size);
  return v;
}

PayloadContext DriverContext(const WriteCommand& c, std::span<const std::byte> core,
                             std::span<const std::byte> driver_in) {
  PayloadContext context;
  context.driver_in = driver_in;
  if (c.request == nullptr) return context;
  if (const Field* t = c.request->Find("qp_type"))
    context.qp_type = static_cast<uint32_t>(ReadField(core, t->offset, t->size));
  if (const Field* f = c.request->Find("create_flags"))
    context.create_flags = static_cast<uint32_t>(ReadField(core, f->offset, f->size));
  constexpr uint32_t kSourceQpn = 1u << 10;  // IB_QP_CREATE_SOURCE_QPN (ib_verbs.h)
  context.has_source_qpn = (context.create_flags & kSourceQpn) != 0;
  // EX_CREATE_QP: rwq_ind_tbl_handle counts only with IB_UVERBS_CREATE_QP_MASK_IND_TABLE.
  if (const Field* m = c.request->Find("comp_mask"); m != nullptr && c.request->Find(
          "rwq_ind_tbl_handle") != nullptr)
    context.has_rwq_ind_table =
        (ReadField(core, m->offset, m->size) & IB_UVERBS_CREATE_QP_MASK_IND_TABLE) != 0;
  return context;
}

Result<void> ValidateWriteBody(const WriteCommand& c, std::span<const std::byte> core) {
  if (core.size() < c.req_size)
    return Fail(ENOSPC, "{}: core request is {} bytes, needs {}", c.short_name, core.size(),
                c.req_size);
  switch (c.trailer) {
    case Trailer::kSendWrs: return ValidateWrs(c, core, true);
    case Trailer::kRecvWrs: return ValidateWrs(c, core, false);
    case Trailer::kWqHandles: return ValidateWqHandles(c, core);
    case Trailer::kFlowSpecs: return ValidateFlowSpecs(c, core);
    case Trailer::kNone: break;
  }
  // uverbs_request(): bytes past the struct the kernel knows must be zero.
  if (core.size() > c.request->size && !AllZero(core.subspan(c.request->size)))
    return Fail(EOPNOTSUPP, "{}: non-zero bytes past the {}-byte request", c.short_name,
                c.request->size);
  return Ok();
}

Result<WriteRequest> DecodeWrite(std::span<const std::byte> buf, const DeviceAbi& device) {
  (void)device;  // the write ABI carries no driver id; driver data is read per device later
  WriteRequest r;
  if (buf.size() < kHdr)
    return Fail(EINVAL, "write of {} bytes is shorter than the command header", buf.size());
  std::memcpy(&r.header, buf.data(), kHdr);
  const uint32_t command = r.header.command;
  // uapi_get_method().
  if ((command & ~(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_CMD_COMMAND_MASK)) != 0)
    return Fail(EINVAL, "command word {:#x} has unknown bits", command);
  const WriteCommand* c = FindWriteCommand(command);
  if (c == nullptr || c->request == nullptr)
    return Fail(EOPNOTSUPP, "command {:#x}{} is not implemented by the kernel", command,
                c != nullptr ? fmt::format(" ({})", c->short_name) : "");
  r.command = c;

  if (c->extended()) {
    if (buf.size() < kHdr + kExHdr)
      return Fail(EINVAL, "{}: write of {} bytes is shorter than the extended headers",
                  c->short_name, buf.size());
    std::memcpy(&r.ex_header, buf.data() + kHdr, kExHdr);
    const auto& ex = r.ex_header;
    // verify_hdr(), extended branch.
    const size_t body = buf.size() - kHdr - kExHdr;
    if ((size_t{r.header.in_words} + ex.provider_in_words) * 8 != body)
      return Fail(EINVAL, "{}: in_words {} + provider_in_words {} (x8) != {} body bytes",
                  c->short_name, r.header.in_words, ex.provider_in_words, body);
    if (size_t{r.header.in_words} * 8 < c->req_size)
      return Fail(ENOSPC, "{}: core request is {} bytes, needs {}", c->short_name,
                  r.header.in_words * 8, c->req_size);
    if (ex.cmd_hdr_reserved != 0)
      return Fail(EINVAL, "{}: cmd_hdr_reserved is not zero", c->short_name);
    if (ex.response != 0) {
      if (r.header.out_words == 0 && ex.provider_out_words == 0)
        return Fail(EINVAL, "{}: a response pointer with no response words", c->short_name);
      if (size_t{r.header.out_words} * 8 < c->resp_size)
        return Fail(ENOSPC, "{}: core response is {} bytes, needs {}", c->short_name,
                    r.header.out_words * 8, c->resp_size);
    } else if (r.header.out_words != 0 || ex.provider_out_words != 0) {
      return Fail(EINVAL, "{}: response words with no response pointer", c->short_name);
    }
    const auto body_bytes = buf.subspan(kHdr + kExHdr);
    r.core = body_bytes.first(size_t{r.header.in_words} * 8);
    r.driver = body_bytes.subspan(r.core.size());
    r.response = ex.response;
    r.response_len = r.header.out_words * 8u;
    r.driver_response = ex.response != 0 ? ex.response + r.response_len : 0;
    r.driver_response_len = ex.provider_out_words * 8u;
  } else {
    // verify_hdr(), legacy branch. The rdma-core v18/v19 16-byte DESTROY_CQ quirk is not
    // accepted: the kernel then reads 8 bytes past the write buffer.
    if (size_t{r.header.in_words} * 4 != buf.size())
      return Fail(EINVAL, "{}: in_words {} (x4) != write size {}", c->short_name,
                  r.header.in_words, buf.size());
    if (buf.size() < c->req_size + kHdr)
      return Fail(ENOSPC, "{}: core request is {} bytes, needs {}", c->short_name,
                  buf.size() - kHdr, c->req_size);
    if (size_t{r.header.out_words} * 4 < c->resp_size)
      return Fail(ENOSPC, "{}: response is {} bytes, needs {}", c->short_name,
                  r.header.out_words * 4, c->resp_size);
    const auto body = buf.subspan(kHdr);
    // ib_uverbs_write(): with udata the core is exactly req_size, the rest is driver data.
    r.core = c->has_udata ? body.first(c->req_size) : body;
    r.driver = c->has_udata ? body.subspan(c->req_size) : std::span<const std::byte>{};
    if (c->has_resp) {
      r.response = ReadField(body, 0, 8);
      r.response_len = r.header.out_words * 4u;
      if (c->has_udata) {
        r.response_len = c->resp_size;
        r.driver_response_len = r.header.out_words * 4u - c->resp_size;
        r.driver_response = r.driver_response_len != 0 ? r.response + c->resp_size : 0;
      }
    }
  }
  RXP_TRY(ValidateWriteBody(*c, r.core));
  return r;
}

}  // namespace rxp::abi
