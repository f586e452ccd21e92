// The legacy write() command table: every IB_USER_VERBS_CMD_* (0..40) and every
// IB_USER_VERBS_EX_CMD_*, as the kernel declares them in uverbs_def_write_intf[]
// (drivers/infiniband/core/uverbs_cmd.c): request and response sizes (UAPI_DEF_WRITE_*),
// driver data, the objects created and destroyed, and how rdma-core reaches the command.
// The same entries serve INVOKE_WRITE, which wraps these commands in an ioctl.
#include <algorithm>
#include <array>

#include "abi/core_layouts.h"
#include "abi/driver_payloads.h"
#include "abi/policy_reasons.h"
#include "abi/schema.h"

namespace rxp::abi {
namespace {

namespace L = layouts;
namespace D = drivers;
using policies::kAllow;

// offsetofend(): the kernel's UAPI_DEF_WRITE_IO_EX sizes the core request and response up to a
// named last member.
#define RXP_OFFSETOFEND(S, m) static_cast<uint16_t>(offsetof(S, m) + sizeof(S::m))
#define CMD(c) .command = IB_USER_VERBS_CMD_##c, .name = "IB_USER_VERBS_CMD_" #c, .short_name = #c
#define EXCMD(c)                                                                    \
  .command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_##c,            \
  .name = "IB_USER_VERBS_EX_CMD_" #c, .short_name = "EX_" #c
constexpr WriteCommand kCommands[] = {
    {CMD(GET_CONTEXT), .request = &L::kGetContext, .req_size = sizeof(ib_uverbs_get_context),
     .response = &L::kGetContextResp, .resp_size = sizeof(ib_uverbs_get_context_resp),
     .has_resp = true, .has_udata = true,
     .drivers = {.mlx5 = &D::kMlx5AllocUcontext}, .policy = kAllow,
     .path = "DEVICE.GET_CONTEXT + ASYNC_EVENT.ALLOC on >= 5.x; this command (via INVOKE_WRITE) "
             "after an EPROTONOSUPPORT from that method"},
    {CMD(QUERY_DEVICE), .request = &L::kQueryDevice, .req_size = sizeof(ib_uverbs_query_device),
     .response = &L::kQueryDeviceResp, .resp_size = sizeof(ib_uverbs_query_device_resp),
     .has_resp = true, .policy = kAllow, .path = "ibv_query_device via INVOKE_WRITE"},
    {CMD(QUERY_PORT), .request = &L::kQueryPort, .req_size = sizeof(ib_uverbs_query_port),
     .response = &L::kQueryPortResp, .resp_size = sizeof(ib_uverbs_query_port_resp),
     .has_resp = true, .policy = kAllow, .path = "fallback of DEVICE.QUERY_PORT"},
    {CMD(ALLOC_PD), .request = &L::kAllocPd, .req_size = sizeof(ib_uverbs_alloc_pd),
     .response = &L::kAllocPdResp, .resp_size = sizeof(ib_uverbs_alloc_pd_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_PD, .created = "pd_handle",
     .drivers = {.mlx5 = &D::kMlx5AllocPd}, .policy = kAllow,
     .path = "ibv_alloc_pd via INVOKE_WRITE"},
    {CMD(DEALLOC_PD), .request = &L::kDeallocPd, .req_size = sizeof(ib_uverbs_dealloc_pd),
     .destroys = UVERBS_OBJECT_PD, .destroyed = "pd_handle", .policy = kAllow,
     .path = "fallback of PD.DESTROY"},
    {CMD(CREATE_AH), .request = &L::kCreateAh, .req_size = sizeof(ib_uverbs_create_ah),
     .response = &L::kCreateAhResp, .resp_size = sizeof(ib_uverbs_create_ah_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_AH, .created = "ah_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateAh, .rxe = &D::kRxeCreateAh}, .policy = kAllow,
     .path = "ibv_create_ah via INVOKE_WRITE"},
    {CMD(MODIFY_AH), .policy = policies::kNoKernelHandler},
    {CMD(QUERY_AH), .policy = policies::kNoKernelHandler},
    {CMD(DESTROY_AH), .request = &L::kDestroyAh, .req_size = sizeof(ib_uverbs_destroy_ah),
     .destroys = UVERBS_OBJECT_AH, .destroyed = "ah_handle", .policy = kAllow,
     .path = "fallback of AH.DESTROY"},
    {CMD(REG_MR), .request = &L::kRegMr, .req_size = sizeof(ib_uverbs_reg_mr),
     .response = &L::kRegMrResp, .resp_size = sizeof(ib_uverbs_reg_mr_resp), .has_resp = true,
     .has_udata = true, .creates = UVERBS_OBJECT_MR, .created = "mr_handle", .policy = kAllow,
     .path = "ibv_reg_mr via INVOKE_WRITE"},
    {CMD(REG_SMR), .policy = policies::kNoKernelHandler},
    {CMD(REREG_MR), .request = &L::kReregMr, .req_size = sizeof(ib_uverbs_rereg_mr),
     .response = &L::kReregMrResp, .resp_size = sizeof(ib_uverbs_rereg_mr_resp),
     .has_resp = true, .has_udata = true, .policy = kAllow,
     .path = "ibv_rereg_mr via INVOKE_WRITE"},
    {CMD(QUERY_MR), .policy = policies::kNoKernelHandler},
    {CMD(DEREG_MR), .request = &L::kDeregMr, .req_size = sizeof(ib_uverbs_dereg_mr),
     .destroys = UVERBS_OBJECT_MR, .destroyed = "mr_handle", .policy = kAllow,
     .path = "fallback of MR.DESTROY"},
    {CMD(ALLOC_MW), .request = &L::kAllocMw, .req_size = sizeof(ib_uverbs_alloc_mw),
     .response = &L::kAllocMwResp, .resp_size = sizeof(ib_uverbs_alloc_mw_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_MW, .created = "mw_handle",
     .drivers = {.mlx5 = &D::kMlx5AllocMw}, .policy = kAllow,
     .path = "ibv_alloc_mw via INVOKE_WRITE"},
    {CMD(BIND_MW), .policy = policies::kNoKernelHandler},
    {CMD(DEALLOC_MW), .request = &L::kDeallocMw, .req_size = sizeof(ib_uverbs_dealloc_mw),
     .destroys = UVERBS_OBJECT_MW, .destroyed = "mw_handle", .policy = kAllow,
     .path = "fallback of MW.DESTROY"},
    {CMD(CREATE_COMP_CHANNEL), .request = &L::kCreateCompChannel,
     .req_size = sizeof(ib_uverbs_create_comp_channel), .response = &L::kCreateCompChannelResp,
     .resp_size = sizeof(ib_uverbs_create_comp_channel_resp), .has_resp = true,
     .creates = UVERBS_OBJECT_COMP_CHANNEL, .created = "fd", .policy = kAllow,
     .path = "ibv_create_comp_channel via INVOKE_WRITE (no ioctl method exists)"},
    {CMD(CREATE_CQ), .request = &L::kCreateCq, .req_size = sizeof(ib_uverbs_create_cq),
     .response = &L::kCreateCqResp, .resp_size = sizeof(ib_uverbs_create_cq_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_CQ, .created = "cq_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateCq, .rxe = &D::kRxeCreateCq}, .policy = kAllow,
     .path = "fallback of CQ.CREATE"},
    {CMD(RESIZE_CQ), .request = &L::kResizeCq, .req_size = sizeof(ib_uverbs_resize_cq),
     .response = &L::kResizeCqResp, .resp_size = sizeof(ib_uverbs_resize_cq_resp),
     .has_resp = true, .has_udata = true,
     .drivers = {.mlx5 = &D::kMlx5ResizeCq, .rxe = &D::kRxeResizeCq}, .policy = kAllow,
     .path = "ibv_resize_cq via INVOKE_WRITE"},
    {CMD(DESTROY_CQ), .request = &L::kDestroyCq, .req_size = sizeof(ib_uverbs_destroy_cq),
     .response = &L::kDestroyCqResp, .resp_size = sizeof(ib_uverbs_destroy_cq_resp),
     .has_resp = true, .destroys = UVERBS_OBJECT_CQ, .destroyed = "cq_handle",
     .policy = kAllow, .path = "fallback of CQ.DESTROY"},
    {CMD(POLL_CQ), .request = &L::kPollCq, .req_size = sizeof(ib_uverbs_poll_cq),
     .response = &L::kPollCqResp, .resp_size = sizeof(ib_uverbs_poll_cq_resp),
     .has_resp = true, .policy = kAllow,
     .path = "kernel-side polling (providers without a user-space CQ)"},
    {CMD(PEEK_CQ), .policy = policies::kNoKernelHandler},
    {CMD(REQ_NOTIFY_CQ), .request = &L::kReqNotifyCq, .req_size = sizeof(ib_uverbs_req_notify_cq),
     .policy = kAllow, .path = "ibv_req_notify_cq on rxe via INVOKE_WRITE"},
    {CMD(CREATE_QP), .request = &L::kCreateQp, .req_size = sizeof(ib_uverbs_create_qp),
     .response = &L::kCreateQpResp, .resp_size = sizeof(ib_uverbs_create_qp_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_QP, .created = "qp_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateQp, .rxe = &D::kRxeCreateQp}, .policy = kAllow,
     .path = "fallback of QP.CREATE"},
    {CMD(QUERY_QP), .request = &L::kQueryQp, .req_size = sizeof(ib_uverbs_query_qp),
     .response = &L::kQueryQpResp, .resp_size = sizeof(ib_uverbs_query_qp_resp),
     .has_resp = true, .policy = kAllow, .path = "ibv_query_qp via INVOKE_WRITE"},
    {CMD(MODIFY_QP), .request = &L::kModifyQp, .req_size = sizeof(ib_uverbs_modify_qp),
     .policy = kAllow, .path = "ibv_modify_qp via INVOKE_WRITE"},
    {CMD(DESTROY_QP), .request = &L::kDestroyQp, .req_size = sizeof(ib_uverbs_destroy_qp),
     .response = &L::kDestroyQpResp, .resp_size = sizeof(ib_uverbs_destroy_qp_resp),
     .has_resp = true, .destroys = UVERBS_OBJECT_QP, .destroyed = "qp_handle",
     .policy = kAllow, .path = "fallback of QP.DESTROY"},
    {CMD(POST_SEND), .request = &L::kPostSend, .req_size = sizeof(ib_uverbs_post_send),
     .response = &L::kPostSendResp, .resp_size = sizeof(ib_uverbs_post_send_resp),
     .has_resp = true, .trailer = Trailer::kSendWrs, .policy = kAllow,
     .path = "raw write(): the rxe/siw send doorbell (wr_count = 0)"},
    {CMD(POST_RECV), .request = &L::kPostRecv, .req_size = sizeof(ib_uverbs_post_recv),
     .response = &L::kPostRecvResp, .resp_size = sizeof(ib_uverbs_post_recv_resp),
     .has_resp = true, .trailer = Trailer::kRecvWrs, .policy = kAllow,
     .path = "providers without a user-space RQ"},
    {CMD(ATTACH_MCAST), .request = &L::kAttachMcast, .req_size = sizeof(ib_uverbs_attach_mcast),
     .policy = kAllow, .path = "ibv_attach_mcast via INVOKE_WRITE"},
    {CMD(DETACH_MCAST), .request = &L::kDetachMcast, .req_size = sizeof(ib_uverbs_detach_mcast),
     .policy = kAllow, .path = "ibv_detach_mcast via INVOKE_WRITE"},
    {CMD(CREATE_SRQ), .request = &L::kCreateSrq, .req_size = sizeof(ib_uverbs_create_srq),
     .response = &L::kCreateSrqResp, .resp_size = sizeof(ib_uverbs_create_srq_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_SRQ,
     .created = "srq_handle", .drivers = {.mlx5 = &D::kMlx5CreateSrq, .rxe = &D::kRxeCreateSrq},
     .policy = kAllow, .path = "fallback of SRQ.CREATE"},
    {CMD(MODIFY_SRQ), .request = &L::kModifySrq, .req_size = sizeof(ib_uverbs_modify_srq),
     .has_udata = true, .drivers = {.rxe = &D::kRxeModifySrq}, .policy = kAllow,
     .path = "ibv_modify_srq via INVOKE_WRITE"},
    {CMD(QUERY_SRQ), .request = &L::kQuerySrq, .req_size = sizeof(ib_uverbs_query_srq),
     .response = &L::kQuerySrqResp, .resp_size = sizeof(ib_uverbs_query_srq_resp),
     .has_resp = true, .policy = kAllow, .path = "ibv_query_srq via INVOKE_WRITE"},
    {CMD(DESTROY_SRQ), .request = &L::kDestroySrq, .req_size = sizeof(ib_uverbs_destroy_srq),
     .response = &L::kDestroySrqResp, .resp_size = sizeof(ib_uverbs_destroy_srq_resp),
     .has_resp = true, .destroys = UVERBS_OBJECT_SRQ, .destroyed = "srq_handle",
     .policy = kAllow, .path = "fallback of SRQ.DESTROY"},
    {CMD(POST_SRQ_RECV), .request = &L::kPostSrqRecv, .req_size = sizeof(ib_uverbs_post_srq_recv),
     .response = &L::kPostSrqRecvResp, .resp_size = sizeof(ib_uverbs_post_srq_recv_resp),
     .has_resp = true, .trailer = Trailer::kRecvWrs, .policy = kAllow,
     .path = "providers without a user-space SRQ"},
    {CMD(OPEN_XRCD), .request = &L::kOpenXrcd, .req_size = sizeof(ib_uverbs_open_xrcd),
     .response = &L::kOpenXrcdResp, .resp_size = sizeof(ib_uverbs_open_xrcd_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_XRCD,
     .created = "xrcd_handle", .policy = kAllow, .path = "ibv_open_xrcd via INVOKE_WRITE"},
    {CMD(CLOSE_XRCD), .request = &L::kCloseXrcd, .req_size = sizeof(ib_uverbs_close_xrcd),
     .destroys = UVERBS_OBJECT_XRCD, .destroyed = "xrcd_handle", .policy = kAllow,
     .path = "fallback of XRCD.DESTROY"},
    {CMD(CREATE_XSRQ), .request = &L::kCreateXsrq, .req_size = sizeof(ib_uverbs_create_xsrq),
     .response = &L::kCreateSrqResp, .resp_size = sizeof(ib_uverbs_create_srq_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_SRQ,
     .created = "srq_handle", .drivers = {.mlx5 = &D::kMlx5CreateSrq, .rxe = &D::kRxeCreateSrq},
     .policy = kAllow, .path = "fallback of SRQ.CREATE (XRC, tag matching)"},
    {CMD(OPEN_QP), .request = &L::kOpenQp, .req_size = sizeof(ib_uverbs_open_qp),
     .response = &L::kCreateQpResp, .resp_size = sizeof(ib_uverbs_create_qp_resp),
     .has_resp = true, .has_udata = true, .creates = UVERBS_OBJECT_QP, .created = "qp_handle",
     .policy = kAllow, .path = "ibv_open_qp via INVOKE_WRITE (XRC target QPs)"},

    // Extended commands: req/resp sizes are offsetofend() of the last mandatory member.
    {EXCMD(QUERY_DEVICE), .request = &L::kExQueryDevice,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_query_device, reserved),
     .response = &L::kExQueryDeviceResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_query_device_resp, response_length),
     .drivers = {.mlx5 = &D::kMlx5QueryDevice}, .policy = kAllow,
     .path = "ibv_query_device_ex via INVOKE_WRITE"},
    {EXCMD(CREATE_CQ), .request = &L::kExCreateCq,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_cq, reserved),
     .response = &L::kExCreateCqResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_cq_resp, response_length),
     .creates = UVERBS_OBJECT_CQ, .created = "base.cq_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateCq, .rxe = &D::kRxeCreateCq}, .policy = kAllow,
     .path = "fallback of CQ.CREATE (ibv_create_cq_ex)"},
    {EXCMD(CREATE_QP), .request = &L::kExCreateQp,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_qp, comp_mask),
     .response = &L::kExCreateQpResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_qp_resp, response_length),
     .creates = UVERBS_OBJECT_QP, .created = "base.qp_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateQp, .rxe = &D::kRxeCreateQp}, .policy = kAllow,
     .path = "fallback of QP.CREATE (ibv_create_qp_ex)"},
    {EXCMD(MODIFY_QP), .request = &L::kExModifyQp,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_modify_qp, base),
     .response = &L::kExModifyQpResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_modify_qp_resp, response_length),
     .drivers = {.mlx5 = &D::kMlx5ModifyQp}, .policy = kAllow,
     .path = "ibv_modify_qp with rate limit or ECE via INVOKE_WRITE"},
    {EXCMD(CREATE_FLOW), .request = &L::kCreateFlow,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_create_flow, flow_attr),
     .response = &L::kCreateFlowResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_create_flow_resp, flow_handle),
     .trailer = Trailer::kFlowSpecs, .creates = UVERBS_OBJECT_FLOW, .created = "flow_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateFlow}, .policy = policies::kFlowSteering,
     .path = "ibv_create_flow via INVOKE_WRITE"},
    {EXCMD(DESTROY_FLOW), .request = &L::kDestroyFlow, .req_size = sizeof(ib_uverbs_destroy_flow),
     .destroys = UVERBS_OBJECT_FLOW, .destroyed = "flow_handle", .policy = kAllow,
     .path = "fallback of FLOW.DESTROY"},
    {EXCMD(CREATE_WQ), .request = &L::kExCreateWq,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_wq, max_sge),
     .response = &L::kExCreateWqResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_wq_resp, wqn),
     .creates = UVERBS_OBJECT_WQ, .created = "wq_handle",
     .drivers = {.mlx5 = &D::kMlx5CreateWq}, .policy = kAllow,
     .path = "fallback of WQ.CREATE"},
    {EXCMD(MODIFY_WQ), .request = &L::kExModifyWq,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_modify_wq, curr_wq_state),
     .drivers = {.mlx5 = &D::kMlx5ModifyWq}, .policy = kAllow,
     .path = "ibv_modify_wq via INVOKE_WRITE"},
    {EXCMD(DESTROY_WQ), .request = &L::kExDestroyWq,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_destroy_wq, wq_handle),
     .response = &L::kExDestroyWqResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_destroy_wq_resp, reserved),
     .destroys = UVERBS_OBJECT_WQ, .destroyed = "wq_handle", .policy = kAllow,
     .path = "fallback of WQ.DESTROY"},
    {EXCMD(CREATE_RWQ_IND_TBL), .request = &L::kExCreateRwqIndTable,
     .req_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size),
     .response = &L::kExCreateRwqIndTableResp,
     .resp_size = RXP_OFFSETOFEND(ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num),
     .trailer = Trailer::kWqHandles, .creates = UVERBS_OBJECT_RWQ_IND_TBL,
     .created = "ind_tbl_handle", .drivers = {.mlx5 = &D::kMlx5CreateRwqIndTbl},
     .policy = kAllow, .path = "ibv_create_rwq_ind_table via INVOKE_WRITE"},
    {EXCMD(DESTROY_RWQ_IND_TBL), .request = &L::kExDestroyRwqIndTable,
     .req_size = sizeof(ib_uverbs_ex_destroy_rwq_ind_table),
     .destroys = UVERBS_OBJECT_RWQ_IND_TBL, .destroyed = "ind_tbl_handle", .policy = kAllow,
     .path = "fallback of RWQ_IND_TBL.DESTROY"},
    {EXCMD(MODIFY_CQ), .request = &L::kExModifyCq, .req_size = sizeof(ib_uverbs_ex_modify_cq),
     .policy = kAllow, .path = "ibv_modify_cq via INVOKE_WRITE"},
};

#undef EXCMD
#undef CMD
#undef RXP_OFFSETOFEND

// Dense lookup by command word: non-extended commands by number, extended ones by number.
struct WriteIndex {
  std::array<const WriteCommand*, 64> plain{};
  std::array<const WriteCommand*, 64> extended{};
};

constexpr WriteIndex BuildIndex() {
  WriteIndex index;
  for (const auto& c : kCommands) {
    const uint32_t n = c.command & IB_USER_VERBS_CMD_COMMAND_MASK;
    (c.extended() ? index.extended : index.plain)[n] = &c;
  }
  return index;
}
constexpr WriteIndex kIndex = BuildIndex();

}  // namespace

std::span<const WriteCommand> WriteCommands() { return kCommands; }

const WriteCommand* FindWriteCommand(uint32_t command) {
  const uint32_t n = command & IB_USER_VERBS_CMD_COMMAND_MASK;
  if ((command & ~(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_CMD_COMMAND_MASK)) != 0 ||
      n >= kIndex.plain.size())
    return nullptr;
  return ((command & IB_USER_VERBS_CMD_FLAG_EXTENDED) != 0 ? kIndex.extended : kIndex.plain)[n];
}

}  // namespace rxp::abi
