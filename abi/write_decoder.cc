#include "abi/write_decoder.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string_view>

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

// Flow steering constants of include/rdma/ib_verbs.h, which the UAPI headers do not carry.
constexpr uint32_t kFlowAttrAllDefault = 0x1, kFlowAttrMcDefault = 0x2;  // ib_flow_attr_type
constexpr uint32_t kFlowAttrFlagsDontTrap = 1u << 1;                      // ib_flow_flags
constexpr uint32_t kFlowAttrFlagsReserved = 1u << 3;
constexpr uint32_t kFlowSpecSupportLayers = 10;  // IB_FLOW_SPEC_SUPPORT_LAYERS
constexpr uint32_t kFlowSpecInner = 0x100;       // IB_FLOW_SPEC_INNER
constexpr uint32_t kFlowSpecVxlanTunnel = 0x50;  // IB_FLOW_SPEC_VXLAN_TUNNEL
constexpr uint32_t kFlowSpecActionTag = 0x1000;  // IB_FLOW_SPEC_ACTION_TAG: the first action

// sizeof(struct ib_uverbs_flow_spec) (core/uverbs.h): the union of the specs uverbs knows.
constexpr size_t kUverbsFlowSpecSize = std::max(
    {sizeof(ib_uverbs_flow_spec_hdr), sizeof(ib_uverbs_flow_spec_eth),
     sizeof(ib_uverbs_flow_spec_ipv4), sizeof(ib_uverbs_flow_spec_esp),
     sizeof(ib_uverbs_flow_spec_tcp_udp), sizeof(ib_uverbs_flow_spec_ipv6),
     sizeof(ib_uverbs_flow_spec_action_tag), sizeof(ib_uverbs_flow_spec_action_drop),
     sizeof(ib_uverbs_flow_spec_action_handle), sizeof(ib_uverbs_flow_spec_action_count)});

// The filter specs ib_uverbs_kern_spec_to_ib_spec_filter() knows, by type without
// IB_FLOW_SPEC_INNER, with the size of the kernel's own filter struct (include/rdma/ib_verbs.h):
// the most of a user filter it takes; mask bytes past it must be zero (spec_filter_size).
struct FlowFilter {
  uint32_t type;
  std::string_view name;
  uint16_t kernel_size;
};
constexpr FlowFilter kFlowFilters[] = {
    {0x20, "ETH", 16},           // struct ib_flow_eth_filter
    {0x30, "IPV4", 12},          // struct ib_flow_ipv4_filter
    {0x31, "IPV6", 39},          // struct ib_flow_ipv6_filter (__packed)
    {0x34, "ESP", 8},            // struct ib_flow_esp_filter
    {0x40, "TCP", 4},            // struct ib_flow_tcp_udp_filter
    {0x41, "UDP", 4},            // struct ib_flow_tcp_udp_filter
    {0x50, "VXLAN_TUNNEL", 4},   // struct ib_flow_tunnel_filter
    {0x51, "GRE", 8},            // struct ib_flow_gre_filter
    {0x60, "MPLS", 4},           // struct ib_flow_mpls_filter
};

// The action specs kern_spec_to_ib_spec_action() knows: the one size each must have, and the
// errno it answers for another.
struct FlowAction {
  uint32_t type;
  std::string_view name;
  uint16_t size;
  int wrong_size;
};
constexpr FlowAction kFlowActions[] = {
    {0x1000, "ACTION_TAG", sizeof(ib_uverbs_flow_spec_action_tag), EINVAL},
    {0x1001, "ACTION_DROP", sizeof(ib_uverbs_flow_spec_action_drop), EINVAL},
    {0x1002, "ACTION_HANDLE", sizeof(ib_uverbs_flow_spec_action_handle), EOPNOTSUPP},
    {0x1003, "ACTION_COUNT", sizeof(ib_uverbs_flow_spec_action_count), EINVAL},
};

// One spec of hdr.size bytes (all present), as kern_spec_to_ib_spec() sizes it.
Result<void> ValidateFlowSpec(const WriteCommand& c, unsigned index,
                              std::span<const std::byte> spec) {
  ib_uverbs_flow_spec_hdr hdr;
  std::memcpy(&hdr, spec.data(), sizeof(hdr));
  if (hdr.reserved != 0)
    return Fail(EINVAL, "{}: flow spec {} has a non-zero reserved field", c.short_name, index);
  if (hdr.type >= kFlowSpecActionTag) {  // kern_spec_to_ib_spec_action()
    const auto* a = std::find_if(std::begin(kFlowActions), std::end(kFlowActions),
                                 [&](const FlowAction& x) { return x.type == hdr.type; });
    if (a == std::end(kFlowActions))
      return Fail(EINVAL, "{}: flow spec {} has unknown action type {:#x}", c.short_name, index,
                  hdr.type);
    if (hdr.size != a->size)
      return Fail(a->wrong_size, "{}: flow spec {} ({}) is {} bytes, not {}", c.short_name,
                  index, a->name, hdr.size, a->size);
    return Ok();
  }
  // kern_spec_to_ib_spec_filter(): value and mask of (size - header) / 2 bytes each.
  if (hdr.size < sizeof(hdr))
    return Fail(EINVAL, "{}: flow spec {} is {} bytes, shorter than its header", c.short_name,
                index, hdr.size);
  const size_t filter = (hdr.size - sizeof(hdr)) / 2;
  if (filter % 4 != 0)  // ib_uverbs_kern_spec_to_ib_spec_filter()
    return Fail(EINVAL, "{}: flow spec {} has a {}-byte filter, not a multiple of 4",
                c.short_name, index, filter);
  if (hdr.type == (kFlowSpecInner | kFlowSpecVxlanTunnel))
    return Fail(EINVAL, "{}: flow spec {} is an inner VXLAN tunnel", c.short_name, index);
  const uint32_t type = hdr.type & ~kFlowSpecInner;
  const auto* f = std::find_if(std::begin(kFlowFilters), std::end(kFlowFilters),
                               [&](const FlowFilter& x) { return x.type == type; });
  if (f == std::end(kFlowFilters))
    return Fail(EINVAL, "{}: flow spec {} has unknown filter type {:#x}", c.short_name, index,
                hdr.type);
  // spec_filter_size(): an empty filter is refused, a longer one must zero its unknown mask.
  if (filter == 0)
    return Fail(EINVAL, "{}: flow spec {} ({}) has an empty filter", c.short_name, index,
                f->name);
  const auto mask = spec.subspan(sizeof(hdr) + filter, filter);
  if (filter > f->kernel_size && !AllZero(mask.subspan(f->kernel_size)))
    return Fail(EINVAL, "{}: flow spec {} ({}) sets mask bytes past the kernel's {}-byte filter",
                c.short_name, index, f->name, f->kernel_size);
  return Ok();
}

// EX_CREATE_FLOW, as ib_uverbs_ex_create_flow() reads it, in its order: the flow_attr checks
// (EINVAL), flow_attr.size bytes of specs (uverbs_request_next: ENOSPC when short), nothing but
// zeros after them (uverbs_request_finish: EOPNOTSUPP), then each spec as
// kern_spec_to_ib_spec() sizes it, and no bytes or specs left over (EINVAL). Not here:
// CAP_NET_RAW (EPERM; the policy's kFlowSteering decides), the port, the QP and the objects
// named inside action specs (the kernel's). The kernel walks the specs only after looking up
// the port and the QP, so a request wrong in both ways is EINVAL here where it may be ENOENT
// there.
Result<void> ValidateFlowSpecs(const WriteCommand& c, std::span<const std::byte> core) {
  static_assert(sizeof(ib_uverbs_create_flow) ==
                offsetof(ib_uverbs_create_flow, flow_attr) + sizeof(ib_uverbs_flow_attr));
  ib_uverbs_create_flow cmd;
  std::memcpy(&cmd, core.data(), sizeof(cmd));  // uverbs_request_start: req_size checked
  const ib_uverbs_flow_attr& fa = cmd.flow_attr;
  if (cmd.comp_mask != 0)
    return Fail(EINVAL, "{}: comp_mask {:#x} is not zero", c.short_name, cmd.comp_mask);
  if (fa.flags >= kFlowAttrFlagsReserved)
    return Fail(EINVAL, "{}: flow_attr.flags {:#x} has reserved bits", c.short_name, fa.flags);
  if ((fa.flags & kFlowAttrFlagsDontTrap) != 0 &&
      (fa.type == kFlowAttrAllDefault || fa.type == kFlowAttrMcDefault))
    return Fail(EINVAL, "{}: DONT_TRAP on a default rule (type {})", c.short_name, fa.type);
  if (fa.num_of_specs > kFlowSpecSupportLayers)
    return Fail(EINVAL, "{}: {} flow specs, the kernel takes at most {}", c.short_name,
                fa.num_of_specs, kFlowSpecSupportLayers);
  if (fa.size > fa.num_of_specs * kUverbsFlowSpecSize)
    return Fail(EINVAL, "{}: flow_attr.size {} exceeds {} specs of at most {} bytes",
                c.short_name, fa.size, fa.num_of_specs, kUverbsFlowSpecSize);
  if (fa.reserved[0] != 0 || fa.reserved[1] != 0)
    return Fail(EINVAL, "{}: flow_attr.reserved is not zero", c.short_name);
  size_t left = core.size() - sizeof(cmd);
  const size_t specs_size = fa.num_of_specs != 0 ? fa.size : 0;
  if (!Take(left, specs_size))
    return Fail(ENOSPC, "{}: flow_attr.size {} exceeds the {} bytes after the request",
                c.short_name, fa.size, core.size() - sizeof(cmd));
  if (!AllZero(core.last(left)))
    return Fail(EOPNOTSUPP, "{}: non-zero bytes after the flow specs", c.short_name);
  auto specs = core.subspan(sizeof(cmd), specs_size);
  unsigned i = 0;
  for (; i < fa.num_of_specs && specs.size() >= sizeof(ib_uverbs_flow_spec_hdr); ++i) {
    const auto size = static_cast<uint16_t>(
        ReadField(specs, offsetof(ib_uverbs_flow_spec_hdr, size), sizeof(uint16_t)));
    if (specs.size() < size) break;
    RXP_TRY(ValidateFlowSpec(c, i, specs.first(size)));
    specs = specs.subspan(size);
  }
  if (!specs.empty() || i != fa.num_of_specs)
    return Fail(EINVAL, "{}: {} of {} flow specs fit in flow_attr.size, {} bytes left over",
                c.short_name, i, fa.num_of_specs, specs.size());
  return Ok();
}

}  // namespace

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
  // CREATE_CQ, EX_CREATE_CQ, RESIZE_CQ: the entries the driver sizes the CQ buffer from.
  if (const Field* e = c.request->Find("cqe"))
    context.cqe = static_cast<uint32_t>(ReadField(core, e->offset, e->size));
  if (c.command == IB_USER_VERBS_CMD_CREATE_SRQ || c.command == IB_USER_VERBS_CMD_CREATE_XSRQ) {
    const Field* wr = c.request->Find("max_wr");
    const Field* sge = c.request->Find("max_sge");
    context.srq_max_wr = static_cast<uint32_t>(ReadField(core, wr->offset, wr->size));
    context.srq_max_sge = static_cast<uint32_t>(ReadField(core, sge->offset, sge->size));
  }
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

Result<void> ValidateWriteResponse(const WriteCommand& c, std::span<const std::byte> core,
                                   uint64_t response_len) {
  if (c.command != IB_USER_VERBS_CMD_POLL_CQ) return Ok();
  const uint64_t ne = ReadField(core, offsetof(ib_uverbs_poll_cq, ne), 4);
  const uint64_t writes = sizeof(ib_uverbs_poll_cq_resp) + ne * sizeof(ib_uverbs_wc);
  if (writes > response_len)
    return Fail(EINVAL, "{}: ne {} completions need {} response bytes, the caller gave {}",
                c.short_name, ne, writes, response_len);
  return Ok();
}

std::optional<std::vector<std::byte>> PaddedExtendedWrite(const WriteRequest& r,
                                                          std::span<const std::byte> buf) {
  const WriteCommand* c = r.command;
  if (c == nullptr || !r.short_core) return std::nullopt;
  const size_t want = c->padded_request_bytes();
  std::vector<std::byte> out;
  out.reserve(buf.size() + want - r.core.size());
  ib_uverbs_cmd_hdr h = r.header;
  h.in_words = static_cast<uint16_t>(want / 8);
  const auto head = std::as_bytes(std::span(&h, 1));
  out.insert(out.end(), head.begin(), head.end());
  const auto ex = buf.subspan(kHdr, kExHdr);
  out.insert(out.end(), ex.begin(), ex.end());
  out.insert(out.end(), r.core.begin(), r.core.end());
  out.resize(out.size() + want - r.core.size());
  out.insert(out.end(), r.driver.begin(), r.driver.end());
  return out;
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
    // No size check of the core request or response: uapi_create_write() gives extended
    // methods no req_size / resp_size, so verify_hdr() lets any length through; the handler's
    // uverbs_request() zero-fills a short request and uverbs_response() truncates the answer.
    if (ex.cmd_hdr_reserved != 0)
      return Fail(EINVAL, "{}: cmd_hdr_reserved is not zero", c->short_name);
    if (ex.response != 0) {
      if (r.header.out_words == 0 && ex.provider_out_words == 0)
        return Fail(EINVAL, "{}: a response pointer with no response words", c->short_name);
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
  if (c->extended() && r.core.size() < c->request->size) {
    r.short_core = true;
    return r;
  }
  RXP_TRY(ValidateWriteBody(*c, r.core));
  RXP_TRY(ValidateWriteResponse(*c, r.core, r.response_len));
  return r;
}

}  // namespace rxp::abi
