// Core uverbs struct layouts. Offsets and sizes come from the installed headers through
// offsetof/sizeof; what each field means comes from the kernel handler that reads it
// (drivers/infiniband/core/uverbs_cmd.c, uverbs_std_types_*.c).
#include "abi/core_layouts.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "abi/names.h"
#include "abi/write_decoder.h"

namespace rxp::abi::layouts {
namespace {

#define F(S, m, k) RXP_FIELD(S, m, k)
// Member m of the request bytes r laid out as struct S (0 when r is too short).
#define RXP_GET(S, m, r) ReadField(r, offsetof(S, m), sizeof(S::m))

// --- handle rules: how a handler reads a handle field when the request decides ---------------

// The qp_type values create_qp() (uverbs_cmd.c) accepts; any other is EINVAL before it looks a
// handle up, so no handle is read.
constexpr uint32_t kCreateQpTypes[] = {
    IB_UVERBS_QPT_RAW_PACKET, IB_UVERBS_QPT_RC,      IB_UVERBS_QPT_UC,     IB_UVERBS_QPT_UD,
    IB_UVERBS_QPT_XRC_INI,    IB_UVERBS_QPT_XRC_TGT, IB_UVERBS_QPT_DRIVER,
};

// What create_qp() reads of a QP creation before its lookups. CREATE_QP's ib_uverbs_create_qp
// reaches it copied into an ib_uverbs_ex_create_qp with comp_mask 0 (ib_uverbs_create_qp).
struct CreateQp {
  bool known_type = false;
  uint64_t qp_type = 0;
  bool is_srq = false;
  bool ind_tbl = false;  // comp_mask & IB_UVERBS_CREATE_QP_MASK_IND_TABLE
  bool has_sq = true;    // false for an indirection-table QP with max_send_wr 0
};
template <typename Cmd>
CreateQp ReadCreateQp(std::span<const std::byte> r) {
  CreateQp q;
  q.qp_type = RXP_GET(Cmd, qp_type, r);
  q.known_type = std::find(std::begin(kCreateQpTypes), std::end(kCreateQpTypes), q.qp_type) !=
                 std::end(kCreateQpTypes);
  q.is_srq = RXP_GET(Cmd, is_srq, r) != 0;
  if constexpr (std::is_same_v<Cmd, ib_uverbs_ex_create_qp>)
    q.ind_tbl = (RXP_GET(Cmd, comp_mask, r) & IB_UVERBS_CREATE_QP_MASK_IND_TABLE) != 0;
  q.has_sq = !(q.ind_tbl && RXP_GET(Cmd, max_send_wr, r) == 0);
  return q;
}
// create_qp(): for IB_QPT_XRC_TGT, pd_handle is looked up as an XRCD (uobj_get_read(
// UVERBS_OBJECT_XRCD, cmd->pd_handle)) and any failure is EINVAL; otherwise it is the PD.
template <typename Cmd>
HandleUse CreateQpPd(std::span<const std::byte> r) {
  const CreateQp q = ReadCreateQp<Cmd>(r);
  if (!q.known_type) return {};
  if (q.qp_type == IB_UVERBS_QPT_XRC_TGT) return {UVERBS_OBJECT_XRCD, EINVAL};
  return {UVERBS_OBJECT_PD};
}
// create_qp(): the send CQ is read unless the QP is an XRC target or has no send queue.
template <typename Cmd>
HandleUse CreateQpSendCq(std::span<const std::byte> r) {
  const CreateQp q = ReadCreateQp<Cmd>(r);
  if (!q.known_type || q.qp_type == IB_UVERBS_QPT_XRC_TGT || !q.has_sq) return {};
  return {UVERBS_OBJECT_CQ};
}
// create_qp(): the receive CQ is read for QPs other than XRC ones without an indirection table
// (as the send CQ when both handles are equal).
template <typename Cmd>
HandleUse CreateQpRecvCq(std::span<const std::byte> r) {
  const CreateQp q = ReadCreateQp<Cmd>(r);
  if (!q.known_type || q.qp_type == IB_UVERBS_QPT_XRC_TGT ||
      q.qp_type == IB_UVERBS_QPT_XRC_INI || q.ind_tbl)
    return {};
  return {UVERBS_OBJECT_CQ};
}
// create_qp(): the SRQ is read only with is_srq, and never for XRC QPs.
template <typename Cmd>
HandleUse CreateQpSrq(std::span<const std::byte> r) {
  const CreateQp q = ReadCreateQp<Cmd>(r);
  if (!q.known_type || q.qp_type == IB_UVERBS_QPT_XRC_TGT ||
      q.qp_type == IB_UVERBS_QPT_XRC_INI || !q.is_srq)
    return {};
  return {UVERBS_OBJECT_SRQ};
}
// The handle fields of both QP creation structs S, with create_qp()'s rules: pd_handle is the
// XRCD of an XRC target QP (CreateQpPd); the CQs and the SRQ are read only when create_qp
// reads them.
#define CREATE_QP_HANDLES(S)                                                       \
  F(S, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD).Rule(&CreateQpPd<S>),              \
      F(S, send_cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ).Rule(&CreateQpSendCq<S>), \
      F(S, recv_cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ).Rule(&CreateQpRecvCq<S>), \
      F(S, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ).Rule(&CreateQpSrq<S>)
// create_qp(): the indirection table only with IB_UVERBS_CREATE_QP_MASK_IND_TABLE.
HandleUse ExCreateQpIndTable(std::span<const std::byte> r) {
  const CreateQp q = ReadCreateQp<ib_uverbs_ex_create_qp>(r);
  if (!q.known_type || !q.ind_tbl) return {};
  return {UVERBS_OBJECT_RWQ_IND_TBL};
}
// ib_uverbs_rereg_mr(): the new PD only with IB_MR_REREG_PD.
HandleUse ReregMrPd(std::span<const std::byte> r) {
  if ((RXP_GET(ib_uverbs_rereg_mr, flags, r) & kMrReregPd) == 0) return {};
  return {UVERBS_OBJECT_PD};
}
// __uverbs_create_xsrq(): the XRCD only for an XRC SRQ (any failure is EINVAL), the CQ only
// for the types that have one (ib_srq_has_cq: XRC, TM).
HandleUse CreateXsrqXrcd(std::span<const std::byte> r) {
  if (RXP_GET(ib_uverbs_create_xsrq, srq_type, r) != IB_UVERBS_SRQT_XRC) return {};
  return {UVERBS_OBJECT_XRCD, EINVAL};
}
HandleUse CreateXsrqCq(std::span<const std::byte> r) {
  const uint64_t type = RXP_GET(ib_uverbs_create_xsrq, srq_type, r);
  if (type != IB_UVERBS_SRQT_XRC && type != IB_UVERBS_SRQT_TM) return {};
  return {UVERBS_OBJECT_CQ};
}
// ib_uverbs_open_qp(): pd_handle is the XRCD; any failure to look it up is EINVAL.
HandleUse OpenQpXrcd(std::span<const std::byte>) { return {UVERBS_OBJECT_XRCD, EINVAL}; }

// --- nested structs -------------------------------------------------------------------------

constexpr Field kGlobalRouteFields[] = {
    F(ib_uverbs_global_route, dgid, kGid),
    F(ib_uverbs_global_route, flow_label, kU32),
    F(ib_uverbs_global_route, sgid_index, kU8),
    F(ib_uverbs_global_route, hop_limit, kU8),
    F(ib_uverbs_global_route, traffic_class, kU8),
};
constexpr Field kAhAttrFields[] = {
    F(ib_uverbs_ah_attr, grh, kStruct).Nested(&kGlobalRoute),
    F(ib_uverbs_ah_attr, dlid, kU16),
    F(ib_uverbs_ah_attr, sl, kU8),
    F(ib_uverbs_ah_attr, src_path_bits, kU8),
    F(ib_uverbs_ah_attr, static_rate, kU8),
    F(ib_uverbs_ah_attr, is_global, kU8),
    F(ib_uverbs_ah_attr, port_num, kU8),
};
constexpr Field kQpDestFields[] = {
    F(ib_uverbs_qp_dest, dgid, kGid),
    F(ib_uverbs_qp_dest, flow_label, kU32),
    F(ib_uverbs_qp_dest, dlid, kU16),
    F(ib_uverbs_qp_dest, sgid_index, kU8),
    F(ib_uverbs_qp_dest, hop_limit, kU8),
    F(ib_uverbs_qp_dest, traffic_class, kU8),
    F(ib_uverbs_qp_dest, sl, kU8),
    F(ib_uverbs_qp_dest, static_rate, kU8),
    F(ib_uverbs_qp_dest, is_global, kU8),
    F(ib_uverbs_qp_dest, port_num, kU8),
};
constexpr Field kQpCapFields[] = {
    F(ib_uverbs_qp_cap, max_send_wr, kU32),
    F(ib_uverbs_qp_cap, max_recv_wr, kU32),
    F(ib_uverbs_qp_cap, max_send_sge, kU32),
    F(ib_uverbs_qp_cap, max_recv_sge, kU32),
    F(ib_uverbs_qp_cap, max_inline_data, kU32),
};
// SGE addresses are IOVAs of the MR (not user VAs of the caller): never translated.
constexpr Field kSgeFields[] = {
    F(ib_uverbs_sge, addr, kHex64),
    F(ib_uverbs_sge, length, kU32),
    F(ib_uverbs_sge, lkey, kHex32),
};
constexpr Field kSendWrFields[] = {
    F(ib_uverbs_send_wr, wr_id, kUserHandle),
    F(ib_uverbs_send_wr, num_sge, kU32),
    F(ib_uverbs_send_wr, opcode, kEnum).Names(&kWrOpcodeNames),
    F(ib_uverbs_send_wr, send_flags, kHex32),
};
constexpr Field kRecvWrFields[] = {
    F(ib_uverbs_recv_wr, wr_id, kUserHandle),
    F(ib_uverbs_recv_wr, num_sge, kU32),
};
constexpr Field kQueryPortRespFields[] = {
    F(ib_uverbs_query_port_resp, port_cap_flags, kHex32),
    F(ib_uverbs_query_port_resp, max_msg_sz, kU32),
    F(ib_uverbs_query_port_resp, gid_tbl_len, kU32),
    F(ib_uverbs_query_port_resp, pkey_tbl_len, kU16),
    F(ib_uverbs_query_port_resp, lid, kU16),
    F(ib_uverbs_query_port_resp, sm_lid, kU16),
    F(ib_uverbs_query_port_resp, state, kEnum).Names(&kPortStateNames),
    F(ib_uverbs_query_port_resp, max_mtu, kEnum).Names(&kMtuNames),
    F(ib_uverbs_query_port_resp, active_mtu, kEnum).Names(&kMtuNames),
    F(ib_uverbs_query_port_resp, active_width, kU8),
    F(ib_uverbs_query_port_resp, active_speed, kU8),
    F(ib_uverbs_query_port_resp, phys_state, kU8),
    F(ib_uverbs_query_port_resp, link_layer, kEnum).Names(&kLinkLayerNames),
};
constexpr Field kQueryPortRespExFields[] = {
    F(ib_uverbs_query_port_resp_ex, legacy_resp, kStruct).Nested(&kQueryPortResp),
    F(ib_uverbs_query_port_resp_ex, port_cap_flags2, kHex32),
    // Newer kernels (6.12 has it) split reserved[6] into reserved[2] and __u32 active_speed_ex,
    // the port speed that no longer fits active_speed's 8 bits (IB_SPEED_XDR, 800G), which
    // ib_uverbs_handler_UVERBS_METHOD_QUERY_PORT fills in (uverbs_std_types_device.c). The
    // headers this builds with may predate it: the offset is 6.12's, inside the struct either way.
    ::rxp::abi::Field::Make("active_speed_ex", offsetof(ib_uverbs_query_port_resp_ex, reserved) + 2,
                            sizeof(uint32_t), FieldKind::kU32),
};
static_assert(offsetof(ib_uverbs_query_port_resp_ex, reserved) + 2 + sizeof(uint32_t) ==
              sizeof(ib_uverbs_query_port_resp_ex));
constexpr Field kGidEntryFields[] = {
    F(ib_uverbs_gid_entry, gid, kGid),
    F(ib_uverbs_gid_entry, gid_index, kU32),
    F(ib_uverbs_gid_entry, port_num, kU32),
    F(ib_uverbs_gid_entry, gid_type, kEnum).Names(&kGidTypeNames),
    F(ib_uverbs_gid_entry, netdev_ifindex, kU32),
};
constexpr Field kCqModerationFields[] = {
    F(ib_uverbs_cq_moderation, cq_count, kU16),
    F(ib_uverbs_cq_moderation, cq_period, kU16),
};
constexpr Field kOdpCapsFields[] = {
    F(ib_uverbs_odp_caps, general_caps, kHex64),
};
constexpr Field kRssCapsFields[] = {
    F(ib_uverbs_rss_caps, supported_qpts, kHex32),
    F(ib_uverbs_rss_caps, max_rwq_indirection_tables, kU32),
    F(ib_uverbs_rss_caps, max_rwq_indirection_table_size, kU32),
};
constexpr Field kTmCapsFields[] = {
    F(ib_uverbs_tm_caps, max_num_tags, kU32),
    F(ib_uverbs_tm_caps, max_ops, kU32),
};
constexpr Field kCqModerationCapsFields[] = {
    F(ib_uverbs_cq_moderation_caps, max_cq_moderation_count, kU16),
    F(ib_uverbs_cq_moderation_caps, max_cq_moderation_period, kU16),
};
constexpr Field kQueryDeviceRespFields[] = {
    F(ib_uverbs_query_device_resp, fw_ver, kHex64),
    F(ib_uverbs_query_device_resp, node_guid, kHex64),
    F(ib_uverbs_query_device_resp, vendor_id, kHex32),
    F(ib_uverbs_query_device_resp, vendor_part_id, kU32),
    F(ib_uverbs_query_device_resp, max_qp, kU32),
    F(ib_uverbs_query_device_resp, max_qp_wr, kU32),
    F(ib_uverbs_query_device_resp, device_cap_flags, kHex32),
    F(ib_uverbs_query_device_resp, max_sge, kU32),
    F(ib_uverbs_query_device_resp, max_cq, kU32),
    F(ib_uverbs_query_device_resp, max_cqe, kU32),
    F(ib_uverbs_query_device_resp, max_mr, kU32),
    F(ib_uverbs_query_device_resp, max_pd, kU32),
    F(ib_uverbs_query_device_resp, max_srq, kU32),
    F(ib_uverbs_query_device_resp, phys_port_cnt, kU8),
};
constexpr Field kFlowAttrFields[] = {
    F(ib_uverbs_flow_attr, type, kU32),
    F(ib_uverbs_flow_attr, size, kU16),
    F(ib_uverbs_flow_attr, priority, kU16),
    F(ib_uverbs_flow_attr, num_of_specs, kU8),
    F(ib_uverbs_flow_attr, port, kU8),
    F(ib_uverbs_flow_attr, flags, kHex32),
};
constexpr Field kWcFields[] = {
    F(ib_uverbs_wc, wr_id, kUserHandle),
    F(ib_uverbs_wc, status, kU32),
    F(ib_uverbs_wc, opcode, kU32),
    F(ib_uverbs_wc, byte_len, kU32),
    F(ib_uverbs_wc, qp_num, kHex32),
};

// --- legacy commands ------------------------------------------------------------------------

constexpr Field kGetContextFields[] = {F(ib_uverbs_get_context, response, kResponsePtr)};
constexpr Field kGetContextRespFields[] = {
    F(ib_uverbs_get_context_resp, async_fd, kFdOut),
    F(ib_uverbs_get_context_resp, num_comp_vectors, kU32),
};
constexpr Field kQueryDeviceFields[] = {F(ib_uverbs_query_device, response, kResponsePtr)};
constexpr Field kQueryPortFields[] = {
    F(ib_uverbs_query_port, response, kResponsePtr),
    F(ib_uverbs_query_port, port_num, kU8),
};
constexpr Field kAllocPdFields[] = {F(ib_uverbs_alloc_pd, response, kResponsePtr)};
constexpr Field kAllocPdRespFields[] = {
    F(ib_uverbs_alloc_pd_resp, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
};
constexpr Field kDeallocPdFields[] = {
    F(ib_uverbs_dealloc_pd, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
};
constexpr Field kCreateAhFields[] = {
    F(ib_uverbs_create_ah, response, kResponsePtr),
    F(ib_uverbs_create_ah, user_handle, kUserHandle),
    F(ib_uverbs_create_ah, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_create_ah, attr, kStruct).Nested(&kAhAttr),
};
constexpr Field kCreateAhRespFields[] = {
    F(ib_uverbs_create_ah_resp, ah_handle, kHandle).Obj(UVERBS_OBJECT_AH),
};
constexpr Field kDestroyAhFields[] = {
    F(ib_uverbs_destroy_ah, ah_handle, kHandle).Obj(UVERBS_OBJECT_AH),
};
// ib_uverbs_reg_mr: `start` is pinned by ib_umem_get() in the caller's mm; `hca_va` is the
// IOVA the NIC uses and is kept as the app's VA (ib_uverbs_reg_mr in uverbs_cmd.c).
constexpr Field kRegMrFields[] = {
    F(ib_uverbs_reg_mr, response, kResponsePtr),
    F(ib_uverbs_reg_mr, start, kPinnedVa).Len("length"),
    F(ib_uverbs_reg_mr, length, kU64),
    F(ib_uverbs_reg_mr, hca_va, kHex64),
    F(ib_uverbs_reg_mr, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_reg_mr, access_flags, kFlags).Names(&kAccessFlagNames),
};
constexpr Field kRegMrRespFields[] = {
    F(ib_uverbs_reg_mr_resp, mr_handle, kHandle).Obj(UVERBS_OBJECT_MR),
    F(ib_uverbs_reg_mr_resp, lkey, kHex32),
    F(ib_uverbs_reg_mr_resp, rkey, kHex32),
};
// REREG_MR: `start` is pinned only with IB_MR_REREG_TRANS (flags & 1).
constexpr Field kReregMrFields[] = {
    F(ib_uverbs_rereg_mr, response, kResponsePtr),
    F(ib_uverbs_rereg_mr, mr_handle, kHandle).Obj(UVERBS_OBJECT_MR),
    F(ib_uverbs_rereg_mr, flags, kHex32),
    F(ib_uverbs_rereg_mr, start, kPinnedVa).Len("length"),
    F(ib_uverbs_rereg_mr, length, kU64),
    F(ib_uverbs_rereg_mr, hca_va, kHex64),
    F(ib_uverbs_rereg_mr, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD).Rule(&ReregMrPd),
    F(ib_uverbs_rereg_mr, access_flags, kFlags).Names(&kAccessFlagNames),
};
constexpr Field kReregMrRespFields[] = {
    F(ib_uverbs_rereg_mr_resp, lkey, kHex32),
    F(ib_uverbs_rereg_mr_resp, rkey, kHex32),
};
constexpr Field kDeregMrFields[] = {
    F(ib_uverbs_dereg_mr, mr_handle, kHandle).Obj(UVERBS_OBJECT_MR),
};
constexpr Field kAllocMwFields[] = {
    F(ib_uverbs_alloc_mw, response, kResponsePtr),
    F(ib_uverbs_alloc_mw, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_alloc_mw, mw_type, kEnum).Names(&kMwTypeNames),
};
constexpr Field kAllocMwRespFields[] = {
    F(ib_uverbs_alloc_mw_resp, mw_handle, kHandle).Obj(UVERBS_OBJECT_MW),
    F(ib_uverbs_alloc_mw_resp, rkey, kHex32),
};
constexpr Field kDeallocMwFields[] = {
    F(ib_uverbs_dealloc_mw, mw_handle, kHandle).Obj(UVERBS_OBJECT_MW),
};
constexpr Field kCreateCompChannelFields[] = {
    F(ib_uverbs_create_comp_channel, response, kResponsePtr),
};
constexpr Field kCreateCompChannelRespFields[] = {
    F(ib_uverbs_create_comp_channel_resp, fd, kFdOut),
};
// CREATE_CQ.comp_channel: an fd of the caller (-1 = none), looked up by
// ib_uverbs_lookup_comp_file() in the caller's fd table.
constexpr Field kCreateCqFields[] = {
    F(ib_uverbs_create_cq, response, kResponsePtr),
    F(ib_uverbs_create_cq, user_handle, kUserHandle),
    F(ib_uverbs_create_cq, cqe, kU32),
    F(ib_uverbs_create_cq, comp_vector, kU32),
    F(ib_uverbs_create_cq, comp_channel, kFdIn),
};
constexpr Field kCreateCqRespFields[] = {
    F(ib_uverbs_create_cq_resp, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_create_cq_resp, cqe, kU32),
};
constexpr Field kResizeCqFields[] = {
    F(ib_uverbs_resize_cq, response, kResponsePtr),
    F(ib_uverbs_resize_cq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_resize_cq, cqe, kU32),
};
constexpr Field kResizeCqRespFields[] = {F(ib_uverbs_resize_cq_resp, cqe, kU32)};
constexpr Field kDestroyCqFields[] = {
    F(ib_uverbs_destroy_cq, response, kResponsePtr),
    F(ib_uverbs_destroy_cq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
};
constexpr Field kDestroyCqRespFields[] = {
    F(ib_uverbs_destroy_cq_resp, comp_events_reported, kU32),
    F(ib_uverbs_destroy_cq_resp, async_events_reported, kU32),
};
constexpr Field kPollCqFields[] = {
    F(ib_uverbs_poll_cq, response, kResponsePtr),
    F(ib_uverbs_poll_cq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_poll_cq, ne, kU32),
};
constexpr Field kPollCqRespFields[] = {F(ib_uverbs_poll_cq_resp, count, kU32)};
constexpr Field kReqNotifyCqFields[] = {
    F(ib_uverbs_req_notify_cq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_req_notify_cq, solicited_only, kU32),
};
constexpr Field kCreateQpFields[] = {
    F(ib_uverbs_create_qp, response, kResponsePtr),
    F(ib_uverbs_create_qp, user_handle, kUserHandle),
    CREATE_QP_HANDLES(ib_uverbs_create_qp),
    F(ib_uverbs_create_qp, max_send_wr, kU32),
    F(ib_uverbs_create_qp, max_recv_wr, kU32),
    F(ib_uverbs_create_qp, max_send_sge, kU32),
    F(ib_uverbs_create_qp, max_recv_sge, kU32),
    F(ib_uverbs_create_qp, max_inline_data, kU32),
    F(ib_uverbs_create_qp, sq_sig_all, kU8),
    F(ib_uverbs_create_qp, qp_type, kEnum).Names(&kQpTypeNames),
    F(ib_uverbs_create_qp, is_srq, kU8),
};
constexpr Field kCreateQpRespFields[] = {
    F(ib_uverbs_create_qp_resp, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_create_qp_resp, qpn, kHex32),
    F(ib_uverbs_create_qp_resp, max_send_wr, kU32),
    F(ib_uverbs_create_qp_resp, max_recv_wr, kU32),
    F(ib_uverbs_create_qp_resp, max_send_sge, kU32),
    F(ib_uverbs_create_qp_resp, max_recv_sge, kU32),
    F(ib_uverbs_create_qp_resp, max_inline_data, kU32),
};
constexpr Field kQueryQpFields[] = {
    F(ib_uverbs_query_qp, response, kResponsePtr),
    F(ib_uverbs_query_qp, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_query_qp, attr_mask, kFlags).Names(&kQpAttrMaskNames),
};
constexpr Field kQueryQpRespFields[] = {
    F(ib_uverbs_query_qp_resp, dest, kStruct).Nested(&kQpDest),
    F(ib_uverbs_query_qp_resp, qkey, kHex32),
    F(ib_uverbs_query_qp_resp, dest_qp_num, kHex32),
    F(ib_uverbs_query_qp_resp, qp_state, kEnum).Names(&kQpStateNames),
    F(ib_uverbs_query_qp_resp, path_mtu, kEnum).Names(&kMtuNames),
    F(ib_uverbs_query_qp_resp, timeout, kU8),
    F(ib_uverbs_query_qp_resp, retry_cnt, kU8),
    F(ib_uverbs_query_qp_resp, rnr_retry, kU8),
};
constexpr Field kModifyQpFields[] = {
    F(ib_uverbs_modify_qp, dest, kStruct).Nested(&kQpDest),
    F(ib_uverbs_modify_qp, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_modify_qp, attr_mask, kFlags).Names(&kQpAttrMaskNames),
    F(ib_uverbs_modify_qp, qkey, kHex32),
    F(ib_uverbs_modify_qp, rq_psn, kHex32),
    F(ib_uverbs_modify_qp, sq_psn, kHex32),
    F(ib_uverbs_modify_qp, dest_qp_num, kHex32),
    F(ib_uverbs_modify_qp, qp_access_flags, kFlags).Names(&kAccessFlagNames),
    F(ib_uverbs_modify_qp, pkey_index, kU16),
    F(ib_uverbs_modify_qp, qp_state, kEnum).Names(&kQpStateNames),
    F(ib_uverbs_modify_qp, path_mtu, kEnum).Names(&kMtuNames),
    F(ib_uverbs_modify_qp, port_num, kU8),
    // The reliability attributes (IB_QP_TIMEOUT, _RETRY_CNT, _RNR_RETRY, _MIN_RNR_TIMER, the
    // RDMA read depths): what decides whether a lost packet is resent or a peer that went away
    // ends in an error completion (rxe_qp_from_attr(): timeout 0 arms no retransmit timer).
    F(ib_uverbs_modify_qp, timeout, kU8),
    F(ib_uverbs_modify_qp, retry_cnt, kU8),
    F(ib_uverbs_modify_qp, rnr_retry, kU8),
    F(ib_uverbs_modify_qp, min_rnr_timer, kU8),
    F(ib_uverbs_modify_qp, max_rd_atomic, kU8),
    F(ib_uverbs_modify_qp, max_dest_rd_atomic, kU8),
};
constexpr Field kDestroyQpFields[] = {
    F(ib_uverbs_destroy_qp, response, kResponsePtr),
    F(ib_uverbs_destroy_qp, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
};
constexpr Field kDestroyQpRespFields[] = {F(ib_uverbs_destroy_qp_resp, events_reported, kU32)};
constexpr Field kPostSendFields[] = {
    F(ib_uverbs_post_send, response, kResponsePtr),
    F(ib_uverbs_post_send, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_post_send, wr_count, kU32),
    F(ib_uverbs_post_send, sge_count, kU32),
    F(ib_uverbs_post_send, wqe_size, kU32),
};
constexpr Field kPostSendRespFields[] = {F(ib_uverbs_post_send_resp, bad_wr, kU32)};
constexpr Field kPostRecvFields[] = {
    F(ib_uverbs_post_recv, response, kResponsePtr),
    F(ib_uverbs_post_recv, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_post_recv, wr_count, kU32),
    F(ib_uverbs_post_recv, sge_count, kU32),
    F(ib_uverbs_post_recv, wqe_size, kU32),
};
constexpr Field kPostRecvRespFields[] = {F(ib_uverbs_post_recv_resp, bad_wr, kU32)};
constexpr Field kAttachMcastFields[] = {
    F(ib_uverbs_attach_mcast, gid, kGid),
    F(ib_uverbs_attach_mcast, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_attach_mcast, mlid, kU16),
};
constexpr Field kDetachMcastFields[] = {
    F(ib_uverbs_detach_mcast, gid, kGid),
    F(ib_uverbs_detach_mcast, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_detach_mcast, mlid, kU16),
};
constexpr Field kCreateSrqFields[] = {
    F(ib_uverbs_create_srq, response, kResponsePtr),
    F(ib_uverbs_create_srq, user_handle, kUserHandle),
    F(ib_uverbs_create_srq, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_create_srq, max_wr, kU32),
    F(ib_uverbs_create_srq, max_sge, kU32),
    F(ib_uverbs_create_srq, srq_limit, kU32),
};
constexpr Field kCreateXsrqFields[] = {
    F(ib_uverbs_create_xsrq, response, kResponsePtr),
    F(ib_uverbs_create_xsrq, user_handle, kUserHandle),
    F(ib_uverbs_create_xsrq, srq_type, kEnum).Names(&kSrqTypeNames),
    F(ib_uverbs_create_xsrq, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_create_xsrq, max_wr, kU32),
    F(ib_uverbs_create_xsrq, max_sge, kU32),
    F(ib_uverbs_create_xsrq, srq_limit, kU32),
    F(ib_uverbs_create_xsrq, max_num_tags, kU32),
    F(ib_uverbs_create_xsrq, xrcd_handle, kHandle).Obj(UVERBS_OBJECT_XRCD).Rule(&CreateXsrqXrcd),
    F(ib_uverbs_create_xsrq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ).Rule(&CreateXsrqCq),
};
constexpr Field kCreateSrqRespFields[] = {
    F(ib_uverbs_create_srq_resp, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ),
    F(ib_uverbs_create_srq_resp, max_wr, kU32),
    F(ib_uverbs_create_srq_resp, max_sge, kU32),
    F(ib_uverbs_create_srq_resp, srqn, kHex32),
};
constexpr Field kModifySrqFields[] = {
    F(ib_uverbs_modify_srq, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ),
    F(ib_uverbs_modify_srq, attr_mask, kHex32),
    F(ib_uverbs_modify_srq, max_wr, kU32),
    F(ib_uverbs_modify_srq, srq_limit, kU32),
};
constexpr Field kQuerySrqFields[] = {
    F(ib_uverbs_query_srq, response, kResponsePtr),
    F(ib_uverbs_query_srq, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ),
};
constexpr Field kQuerySrqRespFields[] = {
    F(ib_uverbs_query_srq_resp, max_wr, kU32),
    F(ib_uverbs_query_srq_resp, max_sge, kU32),
    F(ib_uverbs_query_srq_resp, srq_limit, kU32),
};
constexpr Field kDestroySrqFields[] = {
    F(ib_uverbs_destroy_srq, response, kResponsePtr),
    F(ib_uverbs_destroy_srq, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ),
};
constexpr Field kDestroySrqRespFields[] = {F(ib_uverbs_destroy_srq_resp, events_reported, kU32)};
constexpr Field kPostSrqRecvFields[] = {
    F(ib_uverbs_post_srq_recv, response, kResponsePtr),
    F(ib_uverbs_post_srq_recv, srq_handle, kHandle).Obj(UVERBS_OBJECT_SRQ),
    F(ib_uverbs_post_srq_recv, wr_count, kU32),
    F(ib_uverbs_post_srq_recv, sge_count, kU32),
    F(ib_uverbs_post_srq_recv, wqe_size, kU32),
};
constexpr Field kPostSrqRecvRespFields[] = {F(ib_uverbs_post_srq_recv_resp, bad_wr, kU32)};
// OPEN_XRCD.fd: any file of the caller; the kernel fdget()s it and uses its inode as the
// sharing key for the XRC domain (ib_uverbs_open_xrcd). -1 (0xffffffff) = a private XRCD.
constexpr Field kOpenXrcdFields[] = {
    F(ib_uverbs_open_xrcd, response, kResponsePtr),
    F(ib_uverbs_open_xrcd, fd, kFdIn),
    F(ib_uverbs_open_xrcd, oflags, kHex32),
};
constexpr Field kOpenXrcdRespFields[] = {
    F(ib_uverbs_open_xrcd_resp, xrcd_handle, kHandle).Obj(UVERBS_OBJECT_XRCD),
};
constexpr Field kCloseXrcdFields[] = {
    F(ib_uverbs_close_xrcd, xrcd_handle, kHandle).Obj(UVERBS_OBJECT_XRCD),
};
// OPEN_QP.pd_handle is interpreted as the XRCD handle (ib_uverbs_open_qp; OpenQpXrcd).
constexpr Field kOpenQpFields[] = {
    F(ib_uverbs_open_qp, response, kResponsePtr),
    F(ib_uverbs_open_qp, user_handle, kUserHandle),
    F(ib_uverbs_open_qp, pd_handle, kHandle).Obj(UVERBS_OBJECT_XRCD).Rule(&OpenQpXrcd),
    F(ib_uverbs_open_qp, qpn, kHex32),
    F(ib_uverbs_open_qp, qp_type, kEnum).Names(&kQpTypeNames),
};

// --- extended commands ----------------------------------------------------------------------

constexpr Field kExQueryDeviceFields[] = {F(ib_uverbs_ex_query_device, comp_mask, kHex32)};
constexpr Field kExQueryDeviceRespFields[] = {
    F(ib_uverbs_ex_query_device_resp, base, kStruct).Nested(&kQueryDeviceResp),
    F(ib_uverbs_ex_query_device_resp, response_length, kU32),
    F(ib_uverbs_ex_query_device_resp, odp_caps, kStruct).Nested(&kOdpCaps),
    F(ib_uverbs_ex_query_device_resp, device_cap_flags_ex, kHex64),
    F(ib_uverbs_ex_query_device_resp, rss_caps, kStruct).Nested(&kRssCaps),
    F(ib_uverbs_ex_query_device_resp, tm_caps, kStruct).Nested(&kTmCaps),
    F(ib_uverbs_ex_query_device_resp, max_dm_size, kU64),
};
constexpr Field kExCreateCqFields[] = {
    F(ib_uverbs_ex_create_cq, user_handle, kUserHandle),
    F(ib_uverbs_ex_create_cq, cqe, kU32),
    F(ib_uverbs_ex_create_cq, comp_vector, kU32),
    F(ib_uverbs_ex_create_cq, comp_channel, kFdIn),
    F(ib_uverbs_ex_create_cq, comp_mask, kHex32),
    F(ib_uverbs_ex_create_cq, flags, kHex32),
};
constexpr Field kExCreateCqRespFields[] = {
    F(ib_uverbs_ex_create_cq_resp, base, kStruct).Nested(&kCreateCqResp),
    F(ib_uverbs_ex_create_cq_resp, response_length, kU32),
};
constexpr Field kExModifyCqFields[] = {
    F(ib_uverbs_ex_modify_cq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_ex_modify_cq, attr_mask, kHex32),
    F(ib_uverbs_ex_modify_cq, attr, kStruct).Nested(&kCqModeration),
};
constexpr Field kExCreateQpFields[] = {
    F(ib_uverbs_ex_create_qp, user_handle, kUserHandle),
    CREATE_QP_HANDLES(ib_uverbs_ex_create_qp),
    F(ib_uverbs_ex_create_qp, max_send_wr, kU32),
    F(ib_uverbs_ex_create_qp, max_recv_wr, kU32),
    F(ib_uverbs_ex_create_qp, max_send_sge, kU32),
    F(ib_uverbs_ex_create_qp, max_recv_sge, kU32),
    F(ib_uverbs_ex_create_qp, max_inline_data, kU32),
    F(ib_uverbs_ex_create_qp, sq_sig_all, kU8),
    F(ib_uverbs_ex_create_qp, qp_type, kEnum).Names(&kQpTypeNames),
    F(ib_uverbs_ex_create_qp, is_srq, kU8),
    F(ib_uverbs_ex_create_qp, comp_mask, kHex32),
    F(ib_uverbs_ex_create_qp, create_flags, kHex32),
    F(ib_uverbs_ex_create_qp, rwq_ind_tbl_handle, kHandle).Obj(UVERBS_OBJECT_RWQ_IND_TBL)
        .Rule(&ExCreateQpIndTable),
    F(ib_uverbs_ex_create_qp, source_qpn, kHex32),
};
constexpr Field kExCreateQpRespFields[] = {
    F(ib_uverbs_ex_create_qp_resp, base, kStruct).Nested(&kCreateQpResp),
    F(ib_uverbs_ex_create_qp_resp, response_length, kU32),
};
constexpr Field kExModifyQpFields[] = {
    F(ib_uverbs_ex_modify_qp, base, kStruct).Nested(&kModifyQp),
    F(ib_uverbs_ex_modify_qp, rate_limit, kU32),
};
constexpr Field kExModifyQpRespFields[] = {
    F(ib_uverbs_ex_modify_qp_resp, response_length, kU32),
};
constexpr Field kCreateFlowFields[] = {
    F(ib_uverbs_create_flow, comp_mask, kHex32),
    F(ib_uverbs_create_flow, qp_handle, kHandle).Obj(UVERBS_OBJECT_QP),
    F(ib_uverbs_create_flow, flow_attr, kStruct).Nested(&kFlowAttr),
};
constexpr Field kCreateFlowRespFields[] = {
    F(ib_uverbs_create_flow_resp, flow_handle, kHandle).Obj(UVERBS_OBJECT_FLOW),
};
constexpr Field kDestroyFlowFields[] = {
    F(ib_uverbs_destroy_flow, flow_handle, kHandle).Obj(UVERBS_OBJECT_FLOW),
};
constexpr Field kExCreateWqFields[] = {
    F(ib_uverbs_ex_create_wq, comp_mask, kHex32),
    F(ib_uverbs_ex_create_wq, wq_type, kU32),
    F(ib_uverbs_ex_create_wq, user_handle, kUserHandle),
    F(ib_uverbs_ex_create_wq, pd_handle, kHandle).Obj(UVERBS_OBJECT_PD),
    F(ib_uverbs_ex_create_wq, cq_handle, kHandle).Obj(UVERBS_OBJECT_CQ),
    F(ib_uverbs_ex_create_wq, max_wr, kU32),
    F(ib_uverbs_ex_create_wq, max_sge, kU32),
    F(ib_uverbs_ex_create_wq, create_flags, kHex32),
};
constexpr Field kExCreateWqRespFields[] = {
    F(ib_uverbs_ex_create_wq_resp, response_length, kU32),
    F(ib_uverbs_ex_create_wq_resp, wq_handle, kHandle).Obj(UVERBS_OBJECT_WQ),
    F(ib_uverbs_ex_create_wq_resp, max_wr, kU32),
    F(ib_uverbs_ex_create_wq_resp, max_sge, kU32),
    F(ib_uverbs_ex_create_wq_resp, wqn, kHex32),
};
constexpr Field kExModifyWqFields[] = {
    F(ib_uverbs_ex_modify_wq, attr_mask, kHex32),
    F(ib_uverbs_ex_modify_wq, wq_handle, kHandle).Obj(UVERBS_OBJECT_WQ),
    F(ib_uverbs_ex_modify_wq, wq_state, kU32),
    F(ib_uverbs_ex_modify_wq, curr_wq_state, kU32),
};
constexpr Field kExDestroyWqFields[] = {
    F(ib_uverbs_ex_destroy_wq, comp_mask, kHex32),
    F(ib_uverbs_ex_destroy_wq, wq_handle, kHandle).Obj(UVERBS_OBJECT_WQ),
};
constexpr Field kExDestroyWqRespFields[] = {
    F(ib_uverbs_ex_destroy_wq_resp, response_length, kU32),
    F(ib_uverbs_ex_destroy_wq_resp, events_reported, kU32),
};
constexpr Field kExCreateRwqIndTableFields[] = {
    F(ib_uverbs_ex_create_rwq_ind_table, comp_mask, kHex32),
    F(ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size, kU32),
};
constexpr Field kExCreateRwqIndTableRespFields[] = {
    F(ib_uverbs_ex_create_rwq_ind_table_resp, response_length, kU32),
    F(ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_handle, kHandle)
        .Obj(UVERBS_OBJECT_RWQ_IND_TBL),
    F(ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num, kHex32),
};
constexpr Field kExDestroyRwqIndTableFields[] = {
    F(ib_uverbs_ex_destroy_rwq_ind_table, comp_mask, kHex32),
    F(ib_uverbs_ex_destroy_rwq_ind_table, ind_tbl_handle, kHandle)
        .Obj(UVERBS_OBJECT_RWQ_IND_TBL),
};

// --- event files and ioctl-only structs -----------------------------------------------------

constexpr Field kAsyncEventDescFields[] = {
    F(ib_uverbs_async_event_desc, element, kUserHandle),
    F(ib_uverbs_async_event_desc, event_type, kU32),
};
constexpr Field kCompEventDescFields[] = {
    F(ib_uverbs_comp_event_desc, cq_handle, kUserHandle),
};
constexpr Field kDestroyWqRespU32Fields[] = {
    Field::Make("events_reported", 0, 4, FieldKind::kU32),
};
constexpr Field kFlowActionEspFields[] = {
    F(ib_uverbs_flow_action_esp, spi, kHex32),
    F(ib_uverbs_flow_action_esp, seq, kU32),
    F(ib_uverbs_flow_action_esp, flags, kHex32),
};
// The ESP encap descriptor is a user-space linked list the kernel walks (val_ptr, next_ptr):
// both are user pointers, which is one reason the method is denied.
constexpr Field kFlowActionEspEncapFields[] = {
    F(ib_uverbs_flow_action_esp_encap, val_ptr, kUserPtr).Len("len"),
    F(ib_uverbs_flow_action_esp_encap, next_ptr, kUserPtr),
    F(ib_uverbs_flow_action_esp_encap, len, kU16),
    F(ib_uverbs_flow_action_esp_encap, type, kU16),
};

#undef F
#undef RXP_GET
#undef CREATE_QP_HANDLES

}  // namespace

#define RXP_LAYOUT(var, Struct, fields) const Layout var{#Struct, sizeof(Struct), fields}

RXP_LAYOUT(kGlobalRoute, ib_uverbs_global_route, kGlobalRouteFields);
RXP_LAYOUT(kAhAttr, ib_uverbs_ah_attr, kAhAttrFields);
RXP_LAYOUT(kQpDest, ib_uverbs_qp_dest, kQpDestFields);
RXP_LAYOUT(kQpCap, ib_uverbs_qp_cap, kQpCapFields);
RXP_LAYOUT(kSge, ib_uverbs_sge, kSgeFields);
RXP_LAYOUT(kSendWr, ib_uverbs_send_wr, kSendWrFields);
RXP_LAYOUT(kRecvWr, ib_uverbs_recv_wr, kRecvWrFields);
RXP_LAYOUT(kQueryPortResp, ib_uverbs_query_port_resp, kQueryPortRespFields);
RXP_LAYOUT(kQueryPortRespEx, ib_uverbs_query_port_resp_ex, kQueryPortRespExFields);
RXP_LAYOUT(kGidEntry, ib_uverbs_gid_entry, kGidEntryFields);
RXP_LAYOUT(kCqModeration, ib_uverbs_cq_moderation, kCqModerationFields);
RXP_LAYOUT(kOdpCaps, ib_uverbs_odp_caps, kOdpCapsFields);
RXP_LAYOUT(kRssCaps, ib_uverbs_rss_caps, kRssCapsFields);
RXP_LAYOUT(kTmCaps, ib_uverbs_tm_caps, kTmCapsFields);
RXP_LAYOUT(kCqModerationCaps, ib_uverbs_cq_moderation_caps, kCqModerationCapsFields);
RXP_LAYOUT(kQueryDeviceResp, ib_uverbs_query_device_resp, kQueryDeviceRespFields);
RXP_LAYOUT(kFlowAttr, ib_uverbs_flow_attr, kFlowAttrFields);
RXP_LAYOUT(kWc, ib_uverbs_wc, kWcFields);

RXP_LAYOUT(kGetContext, ib_uverbs_get_context, kGetContextFields);
RXP_LAYOUT(kGetContextResp, ib_uverbs_get_context_resp, kGetContextRespFields);
RXP_LAYOUT(kQueryDevice, ib_uverbs_query_device, kQueryDeviceFields);
RXP_LAYOUT(kQueryPort, ib_uverbs_query_port, kQueryPortFields);
RXP_LAYOUT(kAllocPd, ib_uverbs_alloc_pd, kAllocPdFields);
RXP_LAYOUT(kAllocPdResp, ib_uverbs_alloc_pd_resp, kAllocPdRespFields);
RXP_LAYOUT(kDeallocPd, ib_uverbs_dealloc_pd, kDeallocPdFields);
RXP_LAYOUT(kCreateAh, ib_uverbs_create_ah, kCreateAhFields);
RXP_LAYOUT(kCreateAhResp, ib_uverbs_create_ah_resp, kCreateAhRespFields);
RXP_LAYOUT(kDestroyAh, ib_uverbs_destroy_ah, kDestroyAhFields);
RXP_LAYOUT(kRegMr, ib_uverbs_reg_mr, kRegMrFields);
RXP_LAYOUT(kRegMrResp, ib_uverbs_reg_mr_resp, kRegMrRespFields);
RXP_LAYOUT(kReregMr, ib_uverbs_rereg_mr, kReregMrFields);
RXP_LAYOUT(kReregMrResp, ib_uverbs_rereg_mr_resp, kReregMrRespFields);
RXP_LAYOUT(kDeregMr, ib_uverbs_dereg_mr, kDeregMrFields);
RXP_LAYOUT(kAllocMw, ib_uverbs_alloc_mw, kAllocMwFields);
RXP_LAYOUT(kAllocMwResp, ib_uverbs_alloc_mw_resp, kAllocMwRespFields);
RXP_LAYOUT(kDeallocMw, ib_uverbs_dealloc_mw, kDeallocMwFields);
RXP_LAYOUT(kCreateCompChannel, ib_uverbs_create_comp_channel, kCreateCompChannelFields);
RXP_LAYOUT(kCreateCompChannelResp, ib_uverbs_create_comp_channel_resp,
           kCreateCompChannelRespFields);
RXP_LAYOUT(kCreateCq, ib_uverbs_create_cq, kCreateCqFields);
RXP_LAYOUT(kCreateCqResp, ib_uverbs_create_cq_resp, kCreateCqRespFields);
RXP_LAYOUT(kResizeCq, ib_uverbs_resize_cq, kResizeCqFields);
RXP_LAYOUT(kResizeCqResp, ib_uverbs_resize_cq_resp, kResizeCqRespFields);
RXP_LAYOUT(kDestroyCq, ib_uverbs_destroy_cq, kDestroyCqFields);
RXP_LAYOUT(kDestroyCqResp, ib_uverbs_destroy_cq_resp, kDestroyCqRespFields);
RXP_LAYOUT(kPollCq, ib_uverbs_poll_cq, kPollCqFields);
RXP_LAYOUT(kPollCqResp, ib_uverbs_poll_cq_resp, kPollCqRespFields);
RXP_LAYOUT(kReqNotifyCq, ib_uverbs_req_notify_cq, kReqNotifyCqFields);
RXP_LAYOUT(kCreateQp, ib_uverbs_create_qp, kCreateQpFields);
RXP_LAYOUT(kCreateQpResp, ib_uverbs_create_qp_resp, kCreateQpRespFields);
RXP_LAYOUT(kQueryQp, ib_uverbs_query_qp, kQueryQpFields);
RXP_LAYOUT(kQueryQpResp, ib_uverbs_query_qp_resp, kQueryQpRespFields);
RXP_LAYOUT(kModifyQp, ib_uverbs_modify_qp, kModifyQpFields);
RXP_LAYOUT(kDestroyQp, ib_uverbs_destroy_qp, kDestroyQpFields);
RXP_LAYOUT(kDestroyQpResp, ib_uverbs_destroy_qp_resp, kDestroyQpRespFields);
RXP_LAYOUT(kPostSend, ib_uverbs_post_send, kPostSendFields);
RXP_LAYOUT(kPostSendResp, ib_uverbs_post_send_resp, kPostSendRespFields);
RXP_LAYOUT(kPostRecv, ib_uverbs_post_recv, kPostRecvFields);
RXP_LAYOUT(kPostRecvResp, ib_uverbs_post_recv_resp, kPostRecvRespFields);
RXP_LAYOUT(kAttachMcast, ib_uverbs_attach_mcast, kAttachMcastFields);
RXP_LAYOUT(kDetachMcast, ib_uverbs_detach_mcast, kDetachMcastFields);
RXP_LAYOUT(kCreateSrq, ib_uverbs_create_srq, kCreateSrqFields);
RXP_LAYOUT(kCreateXsrq, ib_uverbs_create_xsrq, kCreateXsrqFields);
RXP_LAYOUT(kCreateSrqResp, ib_uverbs_create_srq_resp, kCreateSrqRespFields);
RXP_LAYOUT(kModifySrq, ib_uverbs_modify_srq, kModifySrqFields);
RXP_LAYOUT(kQuerySrq, ib_uverbs_query_srq, kQuerySrqFields);
RXP_LAYOUT(kQuerySrqResp, ib_uverbs_query_srq_resp, kQuerySrqRespFields);
RXP_LAYOUT(kDestroySrq, ib_uverbs_destroy_srq, kDestroySrqFields);
RXP_LAYOUT(kDestroySrqResp, ib_uverbs_destroy_srq_resp, kDestroySrqRespFields);
RXP_LAYOUT(kPostSrqRecv, ib_uverbs_post_srq_recv, kPostSrqRecvFields);
RXP_LAYOUT(kPostSrqRecvResp, ib_uverbs_post_srq_recv_resp, kPostSrqRecvRespFields);
RXP_LAYOUT(kOpenXrcd, ib_uverbs_open_xrcd, kOpenXrcdFields);
RXP_LAYOUT(kOpenXrcdResp, ib_uverbs_open_xrcd_resp, kOpenXrcdRespFields);
RXP_LAYOUT(kCloseXrcd, ib_uverbs_close_xrcd, kCloseXrcdFields);
RXP_LAYOUT(kOpenQp, ib_uverbs_open_qp, kOpenQpFields);
RXP_LAYOUT(kExQueryDevice, ib_uverbs_ex_query_device, kExQueryDeviceFields);
RXP_LAYOUT(kExQueryDeviceResp, ib_uverbs_ex_query_device_resp, kExQueryDeviceRespFields);
RXP_LAYOUT(kExCreateCq, ib_uverbs_ex_create_cq, kExCreateCqFields);
RXP_LAYOUT(kExCreateCqResp, ib_uverbs_ex_create_cq_resp, kExCreateCqRespFields);
RXP_LAYOUT(kExModifyCq, ib_uverbs_ex_modify_cq, kExModifyCqFields);
RXP_LAYOUT(kExCreateQp, ib_uverbs_ex_create_qp, kExCreateQpFields);
RXP_LAYOUT(kExCreateQpResp, ib_uverbs_ex_create_qp_resp, kExCreateQpRespFields);
RXP_LAYOUT(kExModifyQp, ib_uverbs_ex_modify_qp, kExModifyQpFields);
RXP_LAYOUT(kExModifyQpResp, ib_uverbs_ex_modify_qp_resp, kExModifyQpRespFields);
RXP_LAYOUT(kCreateFlow, ib_uverbs_create_flow, kCreateFlowFields);
RXP_LAYOUT(kCreateFlowResp, ib_uverbs_create_flow_resp, kCreateFlowRespFields);
RXP_LAYOUT(kDestroyFlow, ib_uverbs_destroy_flow, kDestroyFlowFields);
RXP_LAYOUT(kExCreateWq, ib_uverbs_ex_create_wq, kExCreateWqFields);
RXP_LAYOUT(kExCreateWqResp, ib_uverbs_ex_create_wq_resp, kExCreateWqRespFields);
RXP_LAYOUT(kExModifyWq, ib_uverbs_ex_modify_wq, kExModifyWqFields);
RXP_LAYOUT(kExDestroyWq, ib_uverbs_ex_destroy_wq, kExDestroyWqFields);
RXP_LAYOUT(kExDestroyWqResp, ib_uverbs_ex_destroy_wq_resp, kExDestroyWqRespFields);
RXP_LAYOUT(kExCreateRwqIndTable, ib_uverbs_ex_create_rwq_ind_table, kExCreateRwqIndTableFields);
RXP_LAYOUT(kExCreateRwqIndTableResp, ib_uverbs_ex_create_rwq_ind_table_resp,
           kExCreateRwqIndTableRespFields);
RXP_LAYOUT(kExDestroyRwqIndTable, ib_uverbs_ex_destroy_rwq_ind_table,
           kExDestroyRwqIndTableFields);
RXP_LAYOUT(kAsyncEventDesc, ib_uverbs_async_event_desc, kAsyncEventDescFields);
RXP_LAYOUT(kCompEventDesc, ib_uverbs_comp_event_desc, kCompEventDescFields);
const Layout kDestroyWqRespU32{"u32", 4, kDestroyWqRespU32Fields};
RXP_LAYOUT(kFlowActionEsp, ib_uverbs_flow_action_esp, kFlowActionEspFields);
RXP_LAYOUT(kFlowActionEspEncap, ib_uverbs_flow_action_esp_encap, kFlowActionEspEncapFields);

#undef RXP_LAYOUT

}  // namespace rxp::abi::layouts
