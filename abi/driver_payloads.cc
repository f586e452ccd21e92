// mlx5 and rxe driver payload layouts. For mlx5, every address the kernel pins is marked
// kPinnedVa: buf_addr is pinned with ib_umem_get() for the length the driver computes
// (abi/mlx5_queue_sizes.h) and db_addr's page with mlx5_ib_db_map_user()
// (hw/mlx5/{cq,qp,srq}.c). For rxe, responses carry mmap cookies and
// MODIFY_SRQ carries a pointer the kernel copy_to_user()s a new cookie into (rxe_modify_srq).
#include "abi/driver_payloads.h"

#include "abi/mlx5_queue_sizes.h"

namespace rxp::abi::drivers {
namespace {

#define F(S, m, k) RXP_FIELD(S, m, k)

// --- mlx5 -----------------------------------------------------------------------------------

constexpr Field kAllocUcontextReqFields[] = {
    F(mlx5_ib_alloc_ucontext_req_v2, total_num_bfregs, kU32),
    F(mlx5_ib_alloc_ucontext_req_v2, num_low_latency_bfregs, kU32),
    F(mlx5_ib_alloc_ucontext_req_v2, flags, kHex32),  // MLX5_IB_ALLOC_UCTX_DEVX creates a DEVX uid
    F(mlx5_ib_alloc_ucontext_req_v2, comp_mask, kHex32),
    F(mlx5_ib_alloc_ucontext_req_v2, max_cqe_version, kU8),
    F(mlx5_ib_alloc_ucontext_req_v2, lib_caps, kHex64),
};
constexpr Field kAllocUcontextRespFields[] = {
    F(mlx5_ib_alloc_ucontext_resp, qp_tab_size, kU32),
    F(mlx5_ib_alloc_ucontext_resp, bf_reg_size, kU32),
    F(mlx5_ib_alloc_ucontext_resp, tot_bfregs, kU32),
    F(mlx5_ib_alloc_ucontext_resp, cqe_version, kU8),
    F(mlx5_ib_alloc_ucontext_resp, cmds_supp_uhw, kHex32),
    F(mlx5_ib_alloc_ucontext_resp, hca_core_clock_offset, kHex64),
    F(mlx5_ib_alloc_ucontext_resp, log_uar_size, kU32),
    F(mlx5_ib_alloc_ucontext_resp, num_uars_per_page, kU32),
    F(mlx5_ib_alloc_ucontext_resp, num_dyn_bfregs, kU32),
    F(mlx5_ib_alloc_ucontext_resp, dump_fill_mkey, kHex32),
};
constexpr Field kQueryDeviceRespFields[] = {
    F(mlx5_ib_query_device_resp, comp_mask, kHex32),
    F(mlx5_ib_query_device_resp, response_length, kU32),
    F(mlx5_ib_query_device_resp, flags, kHex32),
};
constexpr Field kAllocPdRespFields[] = {F(mlx5_ib_alloc_pd_resp, pdn, kHex32)};
constexpr Field kCreateAhRespFields[] = {
    F(mlx5_ib_create_ah_resp, response_length, kU32),
    F(mlx5_ib_create_ah_resp, dmac, kMac),
};
constexpr Field kAllocMwFields[] = {
    F(mlx5_ib_alloc_mw, comp_mask, kHex32),
    F(mlx5_ib_alloc_mw, num_klms, kU8),
};
constexpr Field kCreateCqFields[] = {
    F(mlx5_ib_create_cq, buf_addr, kPinnedVa).Pins(&mlx5::CreateCqBuf),
    F(mlx5_ib_create_cq, db_addr, kPinnedVa).PinsPage(),
    F(mlx5_ib_create_cq, cqe_size, kU32),
    F(mlx5_ib_create_cq, cqe_comp_en, kU8),
    F(mlx5_ib_create_cq, cqe_comp_res_format, kU8),  // enum mlx5_ib_cqe_comp_res_format
    F(mlx5_ib_create_cq, flags, kHex32),
    F(mlx5_ib_create_cq, uar_page_index, kU16),
};
constexpr Field kCreateCqRespFields[] = {F(mlx5_ib_create_cq_resp, cqn, kHex32)};
constexpr Field kResizeCqFields[] = {
    F(mlx5_ib_resize_cq, buf_addr, kPinnedVa).Pins(&mlx5::ResizeCqBuf),
    F(mlx5_ib_resize_cq, cqe_size, kU16),
};
constexpr Field kCreateSrqFields[] = {
    F(mlx5_ib_create_srq, buf_addr, kPinnedVa).Pins(&mlx5::SrqBuf),
    F(mlx5_ib_create_srq, db_addr, kPinnedVa).PinsPage(),
    F(mlx5_ib_create_srq, flags, kHex32),
    F(mlx5_ib_create_srq, uidx, kU32),
};
constexpr Field kCreateSrqRespFields[] = {F(mlx5_ib_create_srq_resp, srqn, kHex32)};

// mlx5_ib_create_qp is read four ways (hw/mlx5/qp.c create_qp, create_user_qp,
// create_raw_packet_qp, create_dct, create_xrc_tgt_qp):
//  - plain QPs pin buf_addr and db_addr; the union at offset 40 is unused (0);
//  - RAW_PACKET QPs and QPs with IB_QP_CREATE_SOURCE_QPN (an IPoIB underlay UD QP: the
//    EX_CREATE_QP flag, or QP.CREATE's SOURCE_QPN attribute) also pin sq_buf_addr;
//  - DCTs pin nothing; offset 40 is the DC access key. A QP is a DCT when its vendor flags
//    carry MLX5_QP_FLAG_TYPE_DCT without MLX5_QP_FLAG_TYPE_DCI, whatever its qp_type
//    (process_vendor_flags sets qp->type = MLX5_IB_QPT_DCT; create_qp calls create_dct);
//  - XRC_TGT QPs pin nothing;
// and QPs with an RWQ indirection table (RSS) carry mlx5_ib_create_qp_rss instead.
// A DCI's streams (MLX5_QP_FLAG_DCI_STREAM; process_vendor_flags, create_dci).
constexpr Field kDciStreamsFields[] = {
    F(mlx5_ib_create_qp_dci_streams, log_num_concurent, kU8),
    F(mlx5_ib_create_qp_dci_streams, log_num_errored, kU8),
};
extern const Layout kDciStreams;
constexpr Field kCreateQpFields[] = {
    F(mlx5_ib_create_qp, buf_addr, kPinnedVa).Pins(&mlx5::QpBuf),
    F(mlx5_ib_create_qp, db_addr, kPinnedVa).PinsPage(),
    F(mlx5_ib_create_qp, sq_wqe_count, kU32),
    F(mlx5_ib_create_qp, rq_wqe_count, kU32),
    F(mlx5_ib_create_qp, rq_wqe_shift, kU32),
    F(mlx5_ib_create_qp, flags, kHex32),
    F(mlx5_ib_create_qp, uidx, kU32),
    F(mlx5_ib_create_qp, bfreg_index, kU32),
    F(mlx5_ib_create_qp, sq_buf_addr, kReserved),
    F(mlx5_ib_create_qp, ece_options, kHex32),
    F(mlx5_ib_create_qp, dci_streams, kStruct).Nested(&kDciStreams),
};
constexpr Field kCreateQpRawFields[] = {
    F(mlx5_ib_create_qp, buf_addr, kPinnedVa).Pins(&mlx5::RawQpRqBuf),
    F(mlx5_ib_create_qp, db_addr, kPinnedVa).PinsPage(),
    F(mlx5_ib_create_qp, sq_wqe_count, kU32),
    F(mlx5_ib_create_qp, rq_wqe_count, kU32),
    F(mlx5_ib_create_qp, rq_wqe_shift, kU32),
    F(mlx5_ib_create_qp, flags, kHex32),
    F(mlx5_ib_create_qp, uidx, kU32),
    F(mlx5_ib_create_qp, bfreg_index, kU32),
    F(mlx5_ib_create_qp, sq_buf_addr, kPinnedVa).Pins(&mlx5::RawQpSqBuf),
    F(mlx5_ib_create_qp, ece_options, kHex32),
};
constexpr Field kCreateQpDctFields[] = {
    F(mlx5_ib_create_qp, buf_addr, kHex64),
    F(mlx5_ib_create_qp, db_addr, kHex64),
    F(mlx5_ib_create_qp, flags, kHex32),
    F(mlx5_ib_create_qp, uidx, kU32),
    F(mlx5_ib_create_qp, access_key, kHex64),
    F(mlx5_ib_create_qp, ece_options, kHex32),
};
constexpr Field kCreateQpNoBufFields[] = {
    F(mlx5_ib_create_qp, buf_addr, kHex64),
    F(mlx5_ib_create_qp, db_addr, kHex64),
    F(mlx5_ib_create_qp, flags, kHex32),
    F(mlx5_ib_create_qp, uidx, kU32),
    F(mlx5_ib_create_qp, ece_options, kHex32),
};
constexpr Field kCreateQpRssFields[] = {
    F(mlx5_ib_create_qp_rss, rx_hash_fields_mask, kHex64),
    F(mlx5_ib_create_qp_rss, rx_hash_function, kU8),
    F(mlx5_ib_create_qp_rss, rx_key_len, kU8),
    F(mlx5_ib_create_qp_rss, rx_hash_key, kBytes),
    F(mlx5_ib_create_qp_rss, comp_mask, kHex32),
    F(mlx5_ib_create_qp_rss, flags, kHex32),
};
constexpr Field kCreateQpRespFields[] = {
    F(mlx5_ib_create_qp_resp, bfreg_index, kU32),
    F(mlx5_ib_create_qp_resp, ece_options, kHex32),
    F(mlx5_ib_create_qp_resp, comp_mask, kHex32),
    F(mlx5_ib_create_qp_resp, tirn, kHex32),
    F(mlx5_ib_create_qp_resp, tisn, kHex32),
    F(mlx5_ib_create_qp_resp, rqn, kHex32),
    F(mlx5_ib_create_qp_resp, sqn, kHex32),
    F(mlx5_ib_create_qp_resp, tir_icm_addr, kHex64),
};
// The burst bounds of a raw packet QP's rate limit (__mlx5_ib_modify_qp).
constexpr Field kBurstInfoFields[] = {
    F(mlx5_ib_burst_info, max_burst_sz, kU32),
    F(mlx5_ib_burst_info, typical_pkt_sz, kU16),
};
extern const Layout kBurstInfo;
constexpr Field kModifyQpFields[] = {
    F(mlx5_ib_modify_qp, comp_mask, kHex32),
    F(mlx5_ib_modify_qp, burst_info, kStruct).Nested(&kBurstInfo),
    F(mlx5_ib_modify_qp, ece_options, kHex32),
};
constexpr Field kModifyQpRespFields[] = {
    F(mlx5_ib_modify_qp_resp, response_length, kU32),
    F(mlx5_ib_modify_qp_resp, dctn, kHex32),
    F(mlx5_ib_modify_qp_resp, ece_options, kHex32),
};
constexpr Field kCreateWqFields[] = {
    F(mlx5_ib_create_wq, buf_addr, kPinnedVa).Pins(&mlx5::WqBuf),
    F(mlx5_ib_create_wq, db_addr, kPinnedVa).PinsPage(),
    F(mlx5_ib_create_wq, rq_wqe_count, kU32),
    F(mlx5_ib_create_wq, rq_wqe_shift, kU32),
    F(mlx5_ib_create_wq, user_index, kU32),
    F(mlx5_ib_create_wq, flags, kHex32),
    // MLX5_IB_CREATE_WQ_STRIDING_RQ: a multi-packet RQ (prepare_user_rq).
    F(mlx5_ib_create_wq, comp_mask, kHex32),
    F(mlx5_ib_create_wq, single_stride_log_num_of_bytes, kU32),
    F(mlx5_ib_create_wq, single_wqe_log_num_of_strides, kU32),
    F(mlx5_ib_create_wq, two_byte_shift_en, kU32),
};
constexpr Field kCreateWqRespFields[] = {F(mlx5_ib_create_wq_resp, response_length, kU32)};
constexpr Field kModifyWqFields[] = {F(mlx5_ib_modify_wq, comp_mask, kHex32)};
constexpr Field kCreateRwqIndTblRespFields[] = {
    F(mlx5_ib_create_rwq_ind_tbl_resp, response_length, kU32),
};
// mlx5_ib_create_flow: followed by ncounters_data mlx5_ib_flow_counters_data entries whose
// counters_data is a user pointer the kernel copies from: ncounters descriptors of 8 bytes
// (hw/mlx5/counters.c: mlx5_ib_flow_counters_set_data copies
// sizeof(struct mlx5_ib_flow_counters_desc) * ncounters bytes).
constexpr Field kCreateFlowFields[] = {
    F(mlx5_ib_create_flow, ncounters_data, kU32),
};
constexpr Field kFlowCountersDataFields[] = {
    F(mlx5_ib_flow_counters_data, counters_data, kUserPtr)
        .Len("ncounters", sizeof(mlx5_ib_flow_counters_desc)),
    F(mlx5_ib_flow_counters_data, ncounters, kU32),
};
constexpr Field kQueryPortUapiFields[] = {
    F(mlx5_ib_uapi_query_port, flags, kHex64),
    F(mlx5_ib_uapi_query_port, vport, kU16),
    F(mlx5_ib_uapi_query_port, vport_vhca_id, kU16),
    F(mlx5_ib_uapi_query_port, esw_owner_vhca_id, kU16),
    F(mlx5_ib_uapi_query_port, vport_steering_icm_rx, kHex64),
    F(mlx5_ib_uapi_query_port, vport_steering_icm_tx, kHex64),
};

// --- rxe ------------------------------------------------------------------------------------

constexpr Field kMmapInfoFields[] = {
    F(mminfo, offset, kHex64),  // an opaque per-device mmap cookie (rxe_create_mmap_info)
    F(mminfo, size, kU32),
};
constexpr Field kRxeCreateAhRespFields[] = {F(rxe_create_ah_resp, ah_num, kU32)};
constexpr Field kRxeCreateCqRespFields[] = {
    F(rxe_create_cq_resp, mi, kStruct).Nested(&kRxeMmapInfo),
};
constexpr Field kRxeResizeCqRespFields[] = {
    F(rxe_resize_cq_resp, mi, kStruct).Nested(&kRxeMmapInfo),
};
constexpr Field kRxeCreateQpRespFields[] = {
    F(rxe_create_qp_resp, rq_mi, kStruct).Nested(&kRxeMmapInfo),
    F(rxe_create_qp_resp, sq_mi, kStruct).Nested(&kRxeMmapInfo),
};
constexpr Field kRxeCreateSrqRespFields[] = {
    F(rxe_create_srq_resp, mi, kStruct).Nested(&kRxeMmapInfo),
    F(rxe_create_srq_resp, srq_num, kU32),
};
// rxe_modify_srq (sw/rxe/rxe_verbs.c) copy_to_user()s a struct mminfo to mmap_info_addr when
// IB_SRQ_MAX_WR resizes the queue: a user pointer in the driver *input*.
constexpr Field kRxeModifySrqFields[] = {
    F(rxe_modify_srq_cmd, mmap_info_addr, kUserPtr),
};

#undef F

}  // namespace

#define RXP_LAYOUT(var, Struct, fields) const Layout var{#Struct, sizeof(Struct), fields}

namespace {
RXP_LAYOUT(kDciStreams, mlx5_ib_create_qp_dci_streams, kDciStreamsFields);
RXP_LAYOUT(kBurstInfo, mlx5_ib_burst_info, kBurstInfoFields);
RXP_LAYOUT(kAllocUcontextReq, mlx5_ib_alloc_ucontext_req_v2, kAllocUcontextReqFields);
RXP_LAYOUT(kQueryDeviceResp, mlx5_ib_query_device_resp, kQueryDeviceRespFields);
RXP_LAYOUT(kAllocPdResp, mlx5_ib_alloc_pd_resp, kAllocPdRespFields);
RXP_LAYOUT(kCreateAhResp, mlx5_ib_create_ah_resp, kCreateAhRespFields);
RXP_LAYOUT(kAllocMwReq, mlx5_ib_alloc_mw, kAllocMwFields);
RXP_LAYOUT(kCreateCqReq, mlx5_ib_create_cq, kCreateCqFields);
RXP_LAYOUT(kCreateCqResp, mlx5_ib_create_cq_resp, kCreateCqRespFields);
RXP_LAYOUT(kResizeCqReq, mlx5_ib_resize_cq, kResizeCqFields);
RXP_LAYOUT(kCreateSrqReq, mlx5_ib_create_srq, kCreateSrqFields);
RXP_LAYOUT(kCreateSrqResp, mlx5_ib_create_srq_resp, kCreateSrqRespFields);
const Layout kCreateQpReq{"mlx5_ib_create_qp", sizeof(mlx5_ib_create_qp), kCreateQpFields};
const Layout kCreateQpRaw{"mlx5_ib_create_qp (raw packet)", sizeof(mlx5_ib_create_qp),
                          kCreateQpRawFields};
const Layout kCreateQpDct{"mlx5_ib_create_qp (DCT)", sizeof(mlx5_ib_create_qp),
                          kCreateQpDctFields};
const Layout kCreateQpNoBuf{"mlx5_ib_create_qp (XRC target)", sizeof(mlx5_ib_create_qp),
                            kCreateQpNoBufFields};
RXP_LAYOUT(kCreateQpRss, mlx5_ib_create_qp_rss, kCreateQpRssFields);
RXP_LAYOUT(kCreateQpResp, mlx5_ib_create_qp_resp, kCreateQpRespFields);
RXP_LAYOUT(kModifyQpReq, mlx5_ib_modify_qp, kModifyQpFields);
RXP_LAYOUT(kModifyQpResp, mlx5_ib_modify_qp_resp, kModifyQpRespFields);
RXP_LAYOUT(kCreateWqReq, mlx5_ib_create_wq, kCreateWqFields);
RXP_LAYOUT(kCreateWqResp, mlx5_ib_create_wq_resp, kCreateWqRespFields);
RXP_LAYOUT(kModifyWqReq, mlx5_ib_modify_wq, kModifyWqFields);
RXP_LAYOUT(kCreateRwqIndTblResp, mlx5_ib_create_rwq_ind_tbl_resp, kCreateRwqIndTblRespFields);
const Layout kCreateFlowReq{"mlx5_ib_create_flow", sizeof(mlx5_ib_create_flow),
                            kCreateFlowFields, &kMlx5FlowCountersData, "ncounters_data"};
RXP_LAYOUT(kRxeCreateAhResp, rxe_create_ah_resp, kRxeCreateAhRespFields);
RXP_LAYOUT(kRxeCreateCqResp, rxe_create_cq_resp, kRxeCreateCqRespFields);
RXP_LAYOUT(kRxeResizeCqResp, rxe_resize_cq_resp, kRxeResizeCqRespFields);
RXP_LAYOUT(kRxeCreateQpResp, rxe_create_qp_resp, kRxeCreateQpRespFields);
RXP_LAYOUT(kRxeCreateSrqResp, rxe_create_srq_resp, kRxeCreateSrqRespFields);
RXP_LAYOUT(kRxeModifySrqReq, rxe_modify_srq_cmd, kRxeModifySrqFields);
}  // namespace

RXP_LAYOUT(kMlx5AllocUcontextResp, mlx5_ib_alloc_ucontext_resp, kAllocUcontextRespFields);
RXP_LAYOUT(kMlx5QueryPortUapi, mlx5_ib_uapi_query_port, kQueryPortUapiFields);
RXP_LAYOUT(kRxeMmapInfo, mminfo, kMmapInfoFields);
const Layout kMlx5FlowCountersData{"mlx5_ib_flow_counters_data",
                                   sizeof(mlx5_ib_flow_counters_data), kFlowCountersDataFields};

#undef RXP_LAYOUT

namespace {

// The mlx5 create_qp choice described above, in mlx5_ib_create_qp()'s order (hw/mlx5/qp.c):
// params.is_rss_raw (an indirection table) decides first; then process_vendor_flags() turns
// the QP into a DCT on the flags alone; then create_qp() dispatches on qp->type.
const Layout* SelectMlx5CreateQp(const PayloadContext& c) {
  if (c.has_rwq_ind_table) return &kCreateQpRss;
  uint32_t flags = 0;
  if (c.driver_in.size() >= offsetof(mlx5_ib_create_qp, flags) + sizeof(uint32_t)) {
    __builtin_memcpy(&flags, c.driver_in.data() + offsetof(mlx5_ib_create_qp, flags),
                     sizeof(flags));
  }
  // process_vendor_flags(): `switch (flags & (MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_TYPE_DCI))`
  // -- DCT alone makes qp->type MLX5_IB_QPT_DCT for any qp_type; both flags leave the type be
  // (and fail IB_QPT_DRIVER with EINVAL).
  if ((flags & (MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_TYPE_DCI)) == MLX5_QP_FLAG_TYPE_DCT)
    return &kCreateQpDct;
  if (c.qp_type == IB_UVERBS_QPT_XRC_TGT) return &kCreateQpNoBuf;
  // create_user_qp(): `init_attr->qp_type == IB_QPT_RAW_PACKET || qp->flags &
  // IB_QP_CREATE_SOURCE_QPN` -> create_raw_packet_qp(), which pins sq_buf_addr too.
  if (c.qp_type == IB_UVERBS_QPT_RAW_PACKET || c.has_source_qpn) return &kCreateQpRaw;
  return &kCreateQpReq;
}

constexpr const Layout* kCreateQpVariants[] = {&kCreateQpReq, &kCreateQpRaw, &kCreateQpDct,
                                               &kCreateQpNoBuf, &kCreateQpRss};

}  // namespace

const DriverPayload kMlx5AllocUcontext{&kAllocUcontextReq, &kMlx5AllocUcontextResp};
const DriverPayload kMlx5QueryDevice{nullptr, &kQueryDeviceResp};
const DriverPayload kMlx5AllocPd{nullptr, &kAllocPdResp};
const DriverPayload kMlx5CreateAh{nullptr, &kCreateAhResp};
const DriverPayload kMlx5AllocMw{&kAllocMwReq, nullptr};
const DriverPayload kMlx5CreateCq{&kCreateCqReq, &kCreateCqResp};
const DriverPayload kMlx5ResizeCq{&kResizeCqReq, nullptr};
const DriverPayload kMlx5CreateSrq{&kCreateSrqReq, &kCreateSrqResp};
const DriverPayload kMlx5CreateQp{&kCreateQpReq, &kCreateQpResp, &SelectMlx5CreateQp,
                                  kCreateQpVariants};
const DriverPayload kMlx5ModifyQp{&kModifyQpReq, &kModifyQpResp};
const DriverPayload kMlx5CreateWq{&kCreateWqReq, &kCreateWqResp};
const DriverPayload kMlx5ModifyWq{&kModifyWqReq, nullptr};
const DriverPayload kMlx5CreateRwqIndTbl{nullptr, &kCreateRwqIndTblResp};
const DriverPayload kMlx5CreateFlow{&kCreateFlowReq, nullptr};

const DriverPayload kRxeCreateAh{nullptr, &kRxeCreateAhResp};
const DriverPayload kRxeCreateCq{nullptr, &kRxeCreateCqResp};
const DriverPayload kRxeResizeCq{nullptr, &kRxeResizeCqResp};
const DriverPayload kRxeCreateQp{nullptr, &kRxeCreateQpResp};
const DriverPayload kRxeCreateSrq{nullptr, &kRxeCreateSrqResp};
const DriverPayload kRxeModifySrq{&kRxeModifySrqReq, nullptr};

}  // namespace rxp::abi::drivers
