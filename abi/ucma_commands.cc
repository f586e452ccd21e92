// The rdma_cm command table: the write() commands of /dev/infiniband/rdma_cm as
// drivers/infiniband/core/ucma.c implements them (ucma_cmd_table[]). Each handler copies
// sizeof(cmd) bytes of its request; commands with a response write it to cmd.response, a
// user pointer in the request. Context ids ("id") are per-file handles like uverbs handles.
#include "abi/names.h"
#include "abi/policy_reasons.h"
#include "abi/schema.h"

namespace rxp::abi {
namespace {

using policies::kAllow;

#define F(S, m, k) RXP_FIELD(S, m, k)
#define RXP_OFFSETOFEND(S, m) static_cast<uint16_t>(offsetof(S, m) + sizeof(S::m))

constexpr Field kCreateIdFields[] = {
    F(rdma_ucm_create_id, uid, kUserHandle),
    F(rdma_ucm_create_id, response, kResponsePtr),
    F(rdma_ucm_create_id, ps, kEnum).Names(&kPortSpaceNames),
    F(rdma_ucm_create_id, qp_type, kEnum).Names(&kQpTypeNames),
};
constexpr Field kCreateIdRespFields[] = {F(rdma_ucm_create_id_resp, id, kU32)};
constexpr Field kDestroyIdFields[] = {
    F(rdma_ucm_destroy_id, response, kResponsePtr),
    F(rdma_ucm_destroy_id, id, kU32),
};
constexpr Field kDestroyIdRespFields[] = {F(rdma_ucm_destroy_id_resp, events_reported, kU32)};
constexpr Field kBindIpFields[] = {
    F(rdma_ucm_bind_ip, addr, kSockaddr),
    F(rdma_ucm_bind_ip, id, kU32),
};
constexpr Field kBindFields[] = {
    F(rdma_ucm_bind, id, kU32),
    F(rdma_ucm_bind, addr_size, kU16),
    F(rdma_ucm_bind, addr, kSockaddr),
};
constexpr Field kResolveIpFields[] = {
    F(rdma_ucm_resolve_ip, src_addr, kSockaddr),
    F(rdma_ucm_resolve_ip, dst_addr, kSockaddr),
    F(rdma_ucm_resolve_ip, id, kU32),
    F(rdma_ucm_resolve_ip, timeout_ms, kU32),
};
constexpr Field kResolveAddrFields[] = {
    F(rdma_ucm_resolve_addr, id, kU32),
    F(rdma_ucm_resolve_addr, timeout_ms, kU32),
    F(rdma_ucm_resolve_addr, src_addr, kSockaddr),
    F(rdma_ucm_resolve_addr, dst_addr, kSockaddr),
};
constexpr Field kResolveRouteFields[] = {
    F(rdma_ucm_resolve_route, id, kU32),
    F(rdma_ucm_resolve_route, timeout_ms, kU32),
};
constexpr Field kQueryFields[] = {
    F(rdma_ucm_query, response, kResponsePtr),
    F(rdma_ucm_query, id, kU32),
    F(rdma_ucm_query, option, kU32),
};
constexpr Field kQueryRouteRespFields[] = {
    F(rdma_ucm_query_route_resp, node_guid, kHex64),
    F(rdma_ucm_query_route_resp, src_addr, kSockaddr),
    F(rdma_ucm_query_route_resp, dst_addr, kSockaddr),
    F(rdma_ucm_query_route_resp, num_paths, kU32),
    F(rdma_ucm_query_route_resp, port_num, kU8),
    F(rdma_ucm_query_route_resp, ibdev_index, kU32),
};
constexpr Field kConnParamFields[] = {
    F(rdma_ucm_conn_param, qp_num, kHex32),
    F(rdma_ucm_conn_param, qkey, kHex32),
    F(rdma_ucm_conn_param, private_data_len, kU8),
    F(rdma_ucm_conn_param, srq, kU8),
    F(rdma_ucm_conn_param, responder_resources, kU8),
    F(rdma_ucm_conn_param, initiator_depth, kU8),
    F(rdma_ucm_conn_param, retry_count, kU8),
    F(rdma_ucm_conn_param, rnr_retry_count, kU8),
};
extern const Layout kConnParam;
constexpr Field kConnectFields[] = {
    F(rdma_ucm_connect, conn_param, kStruct).Nested(&kConnParam),
    F(rdma_ucm_connect, id, kU32),
};
constexpr Field kListenFields[] = {
    F(rdma_ucm_listen, id, kU32),
    F(rdma_ucm_listen, backlog, kU32),
};
constexpr Field kAcceptFields[] = {
    F(rdma_ucm_accept, uid, kUserHandle),
    F(rdma_ucm_accept, conn_param, kStruct).Nested(&kConnParam),
    F(rdma_ucm_accept, id, kU32),
};
constexpr Field kRejectFields[] = {
    F(rdma_ucm_reject, id, kU32),
    F(rdma_ucm_reject, private_data_len, kU8),
    F(rdma_ucm_reject, reason, kU8),
};
constexpr Field kDisconnectFields[] = {F(rdma_ucm_disconnect, id, kU32)};
constexpr Field kInitQpAttrFields[] = {
    F(rdma_ucm_init_qp_attr, response, kResponsePtr),
    F(rdma_ucm_init_qp_attr, id, kU32),
    F(rdma_ucm_init_qp_attr, qp_state, kEnum).Names(&kQpStateNames),
};
constexpr Field kInitQpAttrRespFields[] = {
    F(ib_uverbs_qp_attr, qp_attr_mask, kFlags).Names(&kQpAttrMaskNames),
    F(ib_uverbs_qp_attr, qp_state, kEnum).Names(&kQpStateNames),
    F(ib_uverbs_qp_attr, path_mtu, kEnum).Names(&kMtuNames),
    F(ib_uverbs_qp_attr, qkey, kHex32),
    F(ib_uverbs_qp_attr, dest_qp_num, kHex32),
    F(ib_uverbs_qp_attr, rq_psn, kHex32),
    F(ib_uverbs_qp_attr, sq_psn, kHex32),
    F(ib_uverbs_qp_attr, timeout, kU8),
    F(ib_uverbs_qp_attr, retry_cnt, kU8),
    F(ib_uverbs_qp_attr, rnr_retry, kU8),
    F(ib_uverbs_qp_attr, min_rnr_timer, kU8),
};
constexpr Field kGetEventFields[] = {F(rdma_ucm_get_event, response, kResponsePtr)};
// A CONNECT_REQUEST event carries the id of a new context the kernel created for the
// incoming connection (ucma_event_handler): the event response creates a handle.
constexpr Field kEventRespFields[] = {
    F(rdma_ucm_event_resp, uid, kUserHandle),
    F(rdma_ucm_event_resp, id, kU32),
    F(rdma_ucm_event_resp, event, kEnum).Names(&kCmEventNames),
    F(rdma_ucm_event_resp, status, kS32),
};
// SET_OPTION.optval is a user pointer the kernel memdup_user()s optlen bytes from.
constexpr Field kSetOptionFields[] = {
    F(rdma_ucm_set_option, optval, kUserPtr).Len("optlen"),
    F(rdma_ucm_set_option, id, kU32),
    F(rdma_ucm_set_option, level, kU32),
    F(rdma_ucm_set_option, optname, kU32),
    F(rdma_ucm_set_option, optlen, kU32),
};
constexpr Field kNotifyFields[] = {
    F(rdma_ucm_notify, id, kU32),
    F(rdma_ucm_notify, event, kU32),
};
constexpr Field kJoinIpMcastFields[] = {
    F(rdma_ucm_join_ip_mcast, response, kResponsePtr),
    F(rdma_ucm_join_ip_mcast, uid, kUserHandle),
    F(rdma_ucm_join_ip_mcast, addr, kSockaddr),
    F(rdma_ucm_join_ip_mcast, id, kU32),
};
constexpr Field kJoinMcastFields[] = {
    F(rdma_ucm_join_mcast, response, kResponsePtr),
    F(rdma_ucm_join_mcast, uid, kUserHandle),
    F(rdma_ucm_join_mcast, id, kU32),
    F(rdma_ucm_join_mcast, addr_size, kU16),
    F(rdma_ucm_join_mcast, join_flags, kU16),
    F(rdma_ucm_join_mcast, addr, kSockaddr),
};
// MIGRATE_ID.fd is another rdma_cm fd of the caller (fdget in ucma_migrate_id).
constexpr Field kMigrateIdFields[] = {
    F(rdma_ucm_migrate_id, response, kResponsePtr),
    F(rdma_ucm_migrate_id, id, kU32),
    F(rdma_ucm_migrate_id, fd, kFdIn),
};
constexpr Field kMigrateRespFields[] = {F(rdma_ucm_migrate_resp, events_reported, kU32)};

#undef F

#define RXP_LAYOUT(var, Struct, fields) constexpr Layout var{#Struct, sizeof(Struct), fields}
RXP_LAYOUT(kCreateId, rdma_ucm_create_id, kCreateIdFields);
RXP_LAYOUT(kCreateIdResp, rdma_ucm_create_id_resp, kCreateIdRespFields);
RXP_LAYOUT(kDestroyId, rdma_ucm_destroy_id, kDestroyIdFields);
RXP_LAYOUT(kDestroyIdResp, rdma_ucm_destroy_id_resp, kDestroyIdRespFields);
RXP_LAYOUT(kBindIp, rdma_ucm_bind_ip, kBindIpFields);
RXP_LAYOUT(kBind, rdma_ucm_bind, kBindFields);
RXP_LAYOUT(kResolveIp, rdma_ucm_resolve_ip, kResolveIpFields);
RXP_LAYOUT(kResolveAddr, rdma_ucm_resolve_addr, kResolveAddrFields);
RXP_LAYOUT(kResolveRoute, rdma_ucm_resolve_route, kResolveRouteFields);
RXP_LAYOUT(kQuery, rdma_ucm_query, kQueryFields);
RXP_LAYOUT(kQueryRouteResp, rdma_ucm_query_route_resp, kQueryRouteRespFields);
RXP_LAYOUT(kConnect, rdma_ucm_connect, kConnectFields);
RXP_LAYOUT(kListen, rdma_ucm_listen, kListenFields);
RXP_LAYOUT(kAccept, rdma_ucm_accept, kAcceptFields);
RXP_LAYOUT(kReject, rdma_ucm_reject, kRejectFields);
RXP_LAYOUT(kDisconnect, rdma_ucm_disconnect, kDisconnectFields);
RXP_LAYOUT(kInitQpAttr, rdma_ucm_init_qp_attr, kInitQpAttrFields);
RXP_LAYOUT(kInitQpAttrResp, ib_uverbs_qp_attr, kInitQpAttrRespFields);
RXP_LAYOUT(kGetEvent, rdma_ucm_get_event, kGetEventFields);
RXP_LAYOUT(kEventResp, rdma_ucm_event_resp, kEventRespFields);
RXP_LAYOUT(kSetOption, rdma_ucm_set_option, kSetOptionFields);
RXP_LAYOUT(kNotify, rdma_ucm_notify, kNotifyFields);
RXP_LAYOUT(kJoinIpMcast, rdma_ucm_join_ip_mcast, kJoinIpMcastFields);
RXP_LAYOUT(kJoinMcast, rdma_ucm_join_mcast, kJoinMcastFields);
RXP_LAYOUT(kMigrateId, rdma_ucm_migrate_id, kMigrateIdFields);
RXP_LAYOUT(kMigrateResp, rdma_ucm_migrate_resp, kMigrateRespFields);
#undef RXP_LAYOUT
constexpr Layout kConnParam{"rdma_ucm_conn_param", sizeof(rdma_ucm_conn_param),
                            kConnParamFields};

#define CMD(c) .cmd = RDMA_USER_CM_CMD_##c, .name = "RDMA_USER_CM_CMD_" #c, .short_name = #c

constexpr UcmaCommand kCommands[] = {
    {CMD(CREATE_ID), .request = &kCreateId, .req_size = sizeof(rdma_ucm_create_id),
     .response = &kCreateIdResp, .resp_min = sizeof(rdma_ucm_create_id_resp), .policy = kAllow,
     .path = "rdma_create_id"},
    {CMD(DESTROY_ID), .request = &kDestroyId, .req_size = sizeof(rdma_ucm_destroy_id),
     .response = &kDestroyIdResp, .resp_min = sizeof(rdma_ucm_destroy_id_resp),
     .policy = kAllow, .path = "rdma_destroy_id"},
    {CMD(BIND_IP), .request = &kBindIp, .req_size = sizeof(rdma_ucm_bind_ip), .policy = kAllow,
     .path = "old librdmacm rdma_bind_addr"},
    {CMD(RESOLVE_IP), .request = &kResolveIp, .req_size = sizeof(rdma_ucm_resolve_ip),
     .policy = kAllow, .path = "old librdmacm rdma_resolve_addr"},
    {CMD(RESOLVE_ROUTE), .request = &kResolveRoute, .req_size = sizeof(rdma_ucm_resolve_route),
     .policy = kAllow, .path = "rdma_resolve_route"},
    {CMD(QUERY_ROUTE), .request = &kQuery, .req_size = sizeof(rdma_ucm_query),
     .response = &kQueryRouteResp,
     .resp_min = static_cast<uint16_t>(offsetof(rdma_ucm_query_route_resp, ibdev_index)),
     .policy = kAllow, .path = "old librdmacm route query"},
    {CMD(CONNECT), .request = &kConnect,
     .req_size = RXP_OFFSETOFEND(rdma_ucm_connect, reserved), .policy = kAllow,
     .path = "rdma_connect"},
    {CMD(LISTEN), .request = &kListen, .req_size = sizeof(rdma_ucm_listen), .policy = kAllow,
     .path = "rdma_listen"},
    {CMD(ACCEPT), .request = &kAccept, .req_size = RXP_OFFSETOFEND(rdma_ucm_accept, reserved),
     .policy = kAllow, .path = "rdma_accept"},
    {CMD(REJECT), .request = &kReject, .req_size = sizeof(rdma_ucm_reject), .policy = kAllow,
     .path = "rdma_reject"},
    {CMD(DISCONNECT), .request = &kDisconnect, .req_size = sizeof(rdma_ucm_disconnect),
     .policy = kAllow, .path = "rdma_disconnect"},
    {CMD(INIT_QP_ATTR), .request = &kInitQpAttr, .req_size = sizeof(rdma_ucm_init_qp_attr),
     .response = &kInitQpAttrResp, .resp_min = sizeof(ib_uverbs_qp_attr), .policy = kAllow,
     .path = "rdma_init_qp_attr (rdma_connect/accept with a QP)"},
    {CMD(GET_EVENT), .request = &kGetEvent, .req_size = sizeof(rdma_ucm_get_event),
     .response = &kEventResp,
     .resp_min = static_cast<uint16_t>(sizeof(rdma_ucm_event_resp) - sizeof(uint32_t) -
                                       sizeof(rdma_ucm_ece)),
     .policy = kAllow, .path = "rdma_get_cm_event"},
    {CMD(GET_OPTION), .policy = {Disposition::kUnsupported, ENOSYS,
                                 "the kernel implements no GET_OPTION handler"}},
    {CMD(SET_OPTION), .request = &kSetOption, .req_size = sizeof(rdma_ucm_set_option),
     .policy = kAllow, .path = "rdma_set_option"},
    {CMD(NOTIFY), .request = &kNotify, .req_size = sizeof(rdma_ucm_notify), .policy = kAllow,
     .path = "rdma_notify"},
    {CMD(JOIN_IP_MCAST), .request = &kJoinIpMcast, .req_size = sizeof(rdma_ucm_join_ip_mcast),
     .response = &kCreateIdResp, .resp_min = sizeof(rdma_ucm_create_id_resp),
     .policy = kAllow, .path = "old librdmacm rdma_join_multicast"},
    {CMD(LEAVE_MCAST), .request = &kDestroyId, .req_size = sizeof(rdma_ucm_destroy_id),
     .response = &kDestroyIdResp, .resp_min = sizeof(rdma_ucm_destroy_id_resp),
     .policy = kAllow, .path = "rdma_leave_multicast"},
    {CMD(MIGRATE_ID), .request = &kMigrateId, .req_size = sizeof(rdma_ucm_migrate_id),
     .response = &kMigrateResp, .resp_min = sizeof(rdma_ucm_migrate_resp),
     .out_unchecked = true, .policy = kAllow, .path = "rdma_migrate_id"},
    {CMD(QUERY), .request = &kQuery, .req_size = sizeof(rdma_ucm_query),
     .variable_response = true, .policy = kAllow,
     .path = "rdma_resolve_addr/route completion (QUERY_ADDR, QUERY_PATH, QUERY_GID)"},
    {CMD(BIND), .request = &kBind, .req_size = sizeof(rdma_ucm_bind), .policy = kAllow,
     .path = "rdma_bind_addr"},
    {CMD(RESOLVE_ADDR), .request = &kResolveAddr, .req_size = sizeof(rdma_ucm_resolve_addr),
     .policy = kAllow, .path = "rdma_resolve_addr"},
    {CMD(JOIN_MCAST), .request = &kJoinMcast, .req_size = sizeof(rdma_ucm_join_mcast),
     .response = &kCreateIdResp, .resp_min = sizeof(rdma_ucm_create_id_resp),
     .policy = kAllow, .path = "rdma_join_multicast"},
};
#undef CMD
#undef RXP_OFFSETOFEND

}  // namespace

std::span<const UcmaCommand> UcmaCommands() { return kCommands; }

const UcmaCommand* FindUcmaCommand(uint32_t cmd) {
  for (const auto& c : kCommands)
    if (c.cmd == cmd) return &c;
  return nullptr;
}

}  // namespace rxp::abi
