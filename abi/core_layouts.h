// Field layouts of the core uverbs structs (ib_user_verbs.h, ib_user_ioctl_verbs.h): what each
// field is, so the decoder knows which carry handles, pinned addresses, pointers and fds, and
// the printer can name them. Used by the write-command table, the ioctl table and ucma.
#pragma once

#include "abi/schema.h"

namespace rxp::abi::layouts {

// Nested structs.
extern const Layout kGlobalRoute, kAhAttr, kQpDest, kQpCap, kSge, kSendWr, kRecvWr;
extern const Layout kQueryPortResp, kQueryPortRespEx, kGidEntry, kCqModeration;
extern const Layout kOdpCaps, kRssCaps, kTmCaps, kCqModerationCaps, kQueryDeviceResp;
extern const Layout kFlowAttr, kWc;

// Requests and responses of the legacy commands, named after the command.
extern const Layout kGetContext, kGetContextResp;
extern const Layout kQueryDevice, kQueryPort;
extern const Layout kAllocPd, kAllocPdResp, kDeallocPd;
extern const Layout kCreateAh, kCreateAhResp, kDestroyAh;
extern const Layout kRegMr, kRegMrResp, kReregMr, kReregMrResp, kDeregMr;
extern const Layout kAllocMw, kAllocMwResp, kDeallocMw;
extern const Layout kCreateCompChannel, kCreateCompChannelResp;
extern const Layout kCreateCq, kCreateCqResp, kResizeCq, kResizeCqResp;
extern const Layout kDestroyCq, kDestroyCqResp, kPollCq, kPollCqResp, kReqNotifyCq;
extern const Layout kCreateQp, kCreateQpResp, kQueryQp, kQueryQpResp, kModifyQp;
extern const Layout kDestroyQp, kDestroyQpResp;
extern const Layout kPostSend, kPostSendResp, kPostRecv, kPostRecvResp;
extern const Layout kAttachMcast, kDetachMcast;
extern const Layout kCreateSrq, kCreateXsrq, kCreateSrqResp, kModifySrq, kQuerySrq, kQuerySrqResp;
extern const Layout kDestroySrq, kDestroySrqResp, kPostSrqRecv, kPostSrqRecvResp;
extern const Layout kOpenXrcd, kOpenXrcdResp, kCloseXrcd, kOpenQp;
// Extended commands.
extern const Layout kExQueryDevice, kExQueryDeviceResp;
extern const Layout kExCreateCq, kExCreateCqResp, kExModifyCq;
extern const Layout kExCreateQp, kExCreateQpResp, kExModifyQp, kExModifyQpResp;
extern const Layout kCreateFlow, kCreateFlowResp, kDestroyFlow;
extern const Layout kExCreateWq, kExCreateWqResp, kExModifyWq, kExDestroyWq, kExDestroyWqResp;
extern const Layout kExCreateRwqIndTable, kExCreateRwqIndTableResp, kExDestroyRwqIndTable;
// Event-file payloads (read() on the async and completion-channel fds).
extern const Layout kAsyncEventDesc, kCompEventDesc;
// ioctl-only structs.
extern const Layout kDestroyWqRespU32, kFlowActionEsp, kFlowActionEspEncap;

}  // namespace rxp::abi::layouts
