// The ioctl (RDMA_VERBS_IOCTL) object / method / attribute table, as the kernel declares it
// with DECLARE_UVERBS_NAMED_METHOD in drivers/infiniband/core/uverbs_std_types_*.c and
// drivers/infiniband/hw/mlx5/{devx,dm,fs,main,qos,std_types,cq}.c (Linux 6.12). Attribute
// sizes follow the kernel's spec macros:
//   UVERBS_ATTR_TYPE(T)          min = max = sizeof(T)
//   UVERBS_ATTR_STRUCT(T, last)  min = offsetofend(T, last), max = sizeof(T), zero trailing
//   UVERBS_ATTR_MIN_SIZE(n)      min = n, max = USHRT_MAX
//   UVERBS_ATTR_CONST_IN         exactly 8 bytes;  UVERBS_ATTR_FLAGS_IN  4 or 8 bytes
//   UVERBS_ATTR_UHW()            UHW_IN / UHW_OUT, optional, any size
#include <algorithm>
#include <array>

#include "abi/core_layouts.h"
#include "abi/driver_payloads.h"
#include "abi/names.h"
#include "abi/policy_reasons.h"
#include "abi/schema.h"

namespace rxp::abi {
namespace {

namespace L = layouts;
namespace D = drivers;
using policies::kAllow;

constexpr bool kMandatory = true;
constexpr bool kOptional = false;
constexpr uint16_t kAnyLen = 0xffff;

#define ID(c) c, #c
#define OFFSETOFEND(S, m) static_cast<uint16_t>(offsetof(S, m) + sizeof(S::m))

constexpr Attr Base(uint16_t id, std::string_view name, std::string_view short_name,
                    AttrType type, bool mandatory) {
  Attr a;
  a.id = id;
  a.name = name;
  a.short_name = short_name;
  a.type = type;
  a.mandatory = mandatory;
  return a;
}
constexpr Attr Idr(uint16_t id, std::string_view name, std::string_view sn, ObjectId object,
                   Access access, bool mandatory) {
  Attr a = Base(id, name, sn, AttrType::kIdr, mandatory);
  a.object = object;
  a.access = access;
  return a;
}
constexpr Attr Fd(uint16_t id, std::string_view name, std::string_view sn, ObjectId object,
                  Access access, bool mandatory) {
  Attr a = Idr(id, name, sn, object, access, mandatory);
  a.type = AttrType::kFd;
  return a;
}
constexpr Attr RawFd(uint16_t id, std::string_view name, std::string_view sn, bool mandatory) {
  return Base(id, name, sn, AttrType::kRawFd, mandatory);
}
constexpr Attr Ptr(AttrType type, uint16_t id, std::string_view name, std::string_view sn,
                   uint16_t min_len, uint16_t max_len, bool mandatory,
                   const Layout* layout = nullptr, AttrMeaning meaning = AttrMeaning::kPlain) {
  Attr a = Base(id, name, sn, type, mandatory);
  a.min_len = min_len;
  a.max_len = max_len;
  a.layout = layout;
  a.meaning = meaning;
  return a;
}
// UVERBS_ATTR_PTR_IN / PTR_OUT with UVERBS_ATTR_TYPE(T): exactly `size` bytes.
constexpr Attr In(uint16_t id, std::string_view name, std::string_view sn, uint16_t size,
                  bool mandatory, AttrMeaning meaning = AttrMeaning::kPlain) {
  return Ptr(AttrType::kPtrIn, id, name, sn, size, size, mandatory, nullptr, meaning);
}
constexpr Attr Out(uint16_t id, std::string_view name, std::string_view sn, uint16_t size,
                   bool mandatory, const Layout* layout = nullptr) {
  return Ptr(AttrType::kPtrOut, id, name, sn, size, size, mandatory, layout);
}
// UVERBS_ATTR_STRUCT(T, last).
constexpr Attr Struct(AttrType type, uint16_t id, std::string_view name, std::string_view sn,
                      uint16_t min_len, uint16_t size, bool mandatory, const Layout* layout) {
  Attr a = Ptr(type, id, name, sn, min_len, size, mandatory, layout);
  a.zero_trailing = true;
  return a;
}
// UVERBS_ATTR_MIN_SIZE(n).
constexpr Attr InMin(uint16_t id, std::string_view name, std::string_view sn, uint16_t min_len,
                     bool mandatory, AttrMeaning meaning = AttrMeaning::kPlain) {
  return Ptr(AttrType::kPtrIn, id, name, sn, min_len, kAnyLen, mandatory, nullptr, meaning);
}
constexpr Attr OutMin(uint16_t id, std::string_view name, std::string_view sn,
                      uint16_t min_len, bool mandatory, AttrMeaning m = AttrMeaning::kPlain) {
  return Ptr(AttrType::kPtrOut, id, name, sn, min_len, kAnyLen, mandatory, nullptr, m);
}
constexpr Attr Const(uint16_t id, std::string_view name, std::string_view sn, bool mandatory,
                     const NameTable* names = nullptr) {
  Attr a = Ptr(AttrType::kConstIn, id, name, sn, 8, 8, mandatory);
  a.names = names;
  return a;
}
constexpr Attr Flags(uint16_t id, std::string_view name, std::string_view sn, bool mandatory,
                     const NameTable* names = nullptr) {
  Attr a = Ptr(AttrType::kFlagsIn, id, name, sn, 4, 8, mandatory);
  a.names = names;
  return a;
}
constexpr Attr Idrs(uint16_t id, std::string_view name, std::string_view sn, ObjectId object,
                    Access access, uint16_t min_count, uint16_t max_count, bool mandatory) {
  Attr a = Idr(id, name, sn, object, access, mandatory);
  a.type = AttrType::kIdrsArray;
  a.min_count = min_count;
  a.max_count = max_count;
  return a;
}
constexpr Attr EnumIn(uint16_t id, std::string_view name, std::string_view sn, bool mandatory,
                      std::span<const PtrSpec> elems) {
  Attr a = Base(id, name, sn, AttrType::kEnumIn, mandatory);
  a.min_len = 0;
  a.max_len = kAnyLen;
  a.enum_elems = elems;
  return a;
}
constexpr Attr UhwIn() {
  return Ptr(AttrType::kPtrIn, ID(UVERBS_ATTR_UHW_IN), "uhw_in", 0, kAnyLen, kOptional, nullptr,
             AttrMeaning::kUdataIn);
}
constexpr Attr UhwOut() {
  return Ptr(AttrType::kPtrOut, ID(UVERBS_ATTR_UHW_OUT), "uhw_out", 0, kAnyLen, kOptional,
             nullptr, AttrMeaning::kUdataOut);
}

// Scalars printed in hex: keys, QP/SRQ/WQ numbers, cookies, offsets.
constexpr Attr WithMeaning(Attr a, AttrMeaning meaning) {
  a.meaning = meaning;
  return a;
}
constexpr Attr Hex(Attr a) {
  a.hex = true;
  return a;
}

constexpr Access kNew = Access::kNew, kRead = Access::kRead, kDestroy = Access::kDestroy;

// --- objects --------------------------------------------------------------------------------

#define OBJ(c, sn) Object{c, #c, sn, Driver::kCore, false}
#define FDOBJ(c, sn) Object{c, #c, sn, Driver::kCore, true}
#define MLX5OBJ(c, sn, fd) Object{c, #c, sn, Driver::kMlx5, fd}
constexpr Object kObjects[] = {
    OBJ(UVERBS_OBJECT_DEVICE, "DEVICE"),
    OBJ(UVERBS_OBJECT_PD, "PD"),
    FDOBJ(UVERBS_OBJECT_COMP_CHANNEL, "COMP_CHANNEL"),
    OBJ(UVERBS_OBJECT_CQ, "CQ"),
    OBJ(UVERBS_OBJECT_QP, "QP"),
    OBJ(UVERBS_OBJECT_SRQ, "SRQ"),
    OBJ(UVERBS_OBJECT_AH, "AH"),
    OBJ(UVERBS_OBJECT_MR, "MR"),
    OBJ(UVERBS_OBJECT_MW, "MW"),
    OBJ(UVERBS_OBJECT_FLOW, "FLOW"),
    OBJ(UVERBS_OBJECT_XRCD, "XRCD"),
    OBJ(UVERBS_OBJECT_RWQ_IND_TBL, "RWQ_IND_TBL"),
    OBJ(UVERBS_OBJECT_WQ, "WQ"),
    OBJ(UVERBS_OBJECT_FLOW_ACTION, "FLOW_ACTION"),
    OBJ(UVERBS_OBJECT_DM, "DM"),
    OBJ(UVERBS_OBJECT_COUNTERS, "COUNTERS"),
    FDOBJ(UVERBS_OBJECT_ASYNC_EVENT, "ASYNC_EVENT"),
    MLX5OBJ(MLX5_IB_OBJECT_DEVX, "MLX5_DEVX", false),
    MLX5OBJ(MLX5_IB_OBJECT_DEVX_OBJ, "MLX5_DEVX_OBJ", false),
    MLX5OBJ(MLX5_IB_OBJECT_DEVX_UMEM, "MLX5_DEVX_UMEM", false),
    MLX5OBJ(MLX5_IB_OBJECT_FLOW_MATCHER, "MLX5_FLOW_MATCHER", false),
    MLX5OBJ(MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD, "MLX5_DEVX_ASYNC_CMD_FD", true),
    MLX5OBJ(MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD, "MLX5_DEVX_ASYNC_EVENT_FD", true),
    MLX5OBJ(MLX5_IB_OBJECT_VAR, "MLX5_VAR", false),
    MLX5OBJ(MLX5_IB_OBJECT_PP, "MLX5_PP", false),
    MLX5OBJ(MLX5_IB_OBJECT_UAR, "MLX5_UAR", false),
    MLX5OBJ(MLX5_IB_OBJECT_STEERING_ANCHOR, "MLX5_STEERING_ANCHOR", false),
};
#undef OBJ
#undef FDOBJ
#undef MLX5OBJ

// --- core methods: DEVICE -------------------------------------------------------------------

// INVOKE_WRITE: a legacy write command in an ioctl. CORE_IN is the command's request struct
// without ib_uverbs_cmd_hdr (its `response` member is ignored), CORE_OUT its response, UHW the
// driver data (uverbs_std_types_device.c: UVERBS_HANDLER(UVERBS_METHOD_INVOKE_WRITE)).
constexpr Attr kInvokeWrite[] = {
    Ptr(AttrType::kConstIn, ID(UVERBS_ATTR_WRITE_CMD), "cmd", 8, 8, kMandatory, nullptr,
        AttrMeaning::kWriteCmd),
    Ptr(AttrType::kPtrIn, ID(UVERBS_ATTR_CORE_IN), "core_in", sizeof(uint32_t), kAnyLen,
        kOptional, nullptr, AttrMeaning::kCoreIn),
    Ptr(AttrType::kPtrOut, ID(UVERBS_ATTR_CORE_OUT), "core_out", 0, kAnyLen, kOptional, nullptr,
        AttrMeaning::kCoreOut),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kGetContext[] = {
    Out(ID(UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS), "num_comp_vectors", 4, kOptional),
    Hex(Out(ID(UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT), "core_support", 8, kOptional)),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kQueryContext[] = {
    Out(ID(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS), "num_comp_vectors", 4, kOptional),
    Hex(Out(ID(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT), "core_support", 8, kOptional)),
};
constexpr Attr kInfoHandles[] = {
    Const(ID(UVERBS_ATTR_INFO_OBJECT_ID), "object", kMandatory),
    Out(ID(UVERBS_ATTR_INFO_TOTAL_HANDLES), "total", 4, kOptional),
    OutMin(ID(UVERBS_ATTR_INFO_HANDLES_LIST), "handles", sizeof(uint32_t), kOptional),
};
constexpr Attr kQueryPort[] = {
    Const(ID(UVERBS_ATTR_QUERY_PORT_PORT_NUM), "port", kMandatory),
    // UVERBS_ATTR_STRUCT(struct ib_uverbs_query_port_resp_ex, reserved) in 6.1, (...,
    // active_speed_ex) in 6.12 (uverbs_std_types_device.c): the whole 48-byte struct either way.
    Struct(AttrType::kPtrOut, ID(UVERBS_ATTR_QUERY_PORT_RESP), "resp",
           sizeof(ib_uverbs_query_port_resp_ex), sizeof(ib_uverbs_query_port_resp_ex),
           kMandatory, &L::kQueryPortRespEx),
};
// uverbs_std_types_device.c, UVERBS_METHOD_QUERY_PORT_SPEED: the port's effective speed
// (u64, 100 Mb/s units).
constexpr Attr kQueryPortSpeed[] = {
    Const(kUverbsAttrQueryPortSpeedPortNum, "UVERBS_ATTR_QUERY_PORT_SPEED_PORT_NUM", "port",
          kMandatory),
    Out(kUverbsAttrQueryPortSpeedResp, "UVERBS_ATTR_QUERY_PORT_SPEED_RESP", "speed", 8,
        kMandatory),
};
constexpr Attr kQueryGidTable[] = {
    Const(ID(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE), "entry_size", kMandatory),
    Flags(ID(UVERBS_ATTR_QUERY_GID_TABLE_FLAGS), "flags", kOptional),
    OutMin(ID(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES), "entries", 0, kMandatory),
    Out(ID(UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES), "num_entries", 8, kMandatory),
};
constexpr Attr kQueryGidEntry[] = {
    Const(ID(UVERBS_ATTR_QUERY_GID_ENTRY_PORT), "port", kMandatory),
    Const(ID(UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX), "index", kMandatory),
    Flags(ID(UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS), "flags", kMandatory),
    Struct(AttrType::kPtrOut, ID(UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY), "entry",
           OFFSETOFEND(ib_uverbs_gid_entry, netdev_ifindex), sizeof(ib_uverbs_gid_entry),
           kMandatory, &L::kGidEntry),
};

// --- core methods: objects ------------------------------------------------------------------

constexpr Attr kPdDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kDestroy, kMandatory),
};
constexpr Attr kCqCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_CQ_HANDLE), "handle", UVERBS_OBJECT_CQ, kNew, kMandatory),
    In(ID(UVERBS_ATTR_CREATE_CQ_CQE), "cqe", 4, kMandatory),
    Hex(In(ID(UVERBS_ATTR_CREATE_CQ_USER_HANDLE), "user_handle", 8, kMandatory)),
    Fd(ID(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL), "channel", UVERBS_OBJECT_COMP_CHANNEL, kRead,
       kOptional),
    In(ID(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR), "vector", 4, kMandatory),
    Flags(ID(UVERBS_ATTR_CREATE_CQ_FLAGS), "flags", kOptional),
    Out(ID(UVERBS_ATTR_CREATE_CQ_RESP_CQE), "cqe", 4, kMandatory),
    Fd(ID(UVERBS_ATTR_CREATE_CQ_EVENT_FD), "event_fd", UVERBS_OBJECT_ASYNC_EVENT, kRead,
       kOptional),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kCqDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_CQ_HANDLE), "cq", UVERBS_OBJECT_CQ, kDestroy, kMandatory),
    Out(ID(UVERBS_ATTR_DESTROY_CQ_RESP), "resp", sizeof(ib_uverbs_destroy_cq_resp), kMandatory,
        &L::kDestroyCqResp),
};
constexpr Attr kQpCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_QP_HANDLE), "handle", UVERBS_OBJECT_QP, kNew, kMandatory),
    Idr(ID(UVERBS_ATTR_CREATE_QP_XRCD_HANDLE), "xrcd", UVERBS_OBJECT_XRCD, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_QP_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_QP_SRQ_HANDLE), "srq", UVERBS_OBJECT_SRQ, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE), "send_cq", UVERBS_OBJECT_CQ, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE), "recv_cq", UVERBS_OBJECT_CQ, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE), "ind_table", UVERBS_OBJECT_RWQ_IND_TBL,
        kRead, kOptional),
    Hex(In(ID(UVERBS_ATTR_CREATE_QP_USER_HANDLE), "user_handle", 8, kMandatory)),
    Struct(AttrType::kPtrIn, ID(UVERBS_ATTR_CREATE_QP_CAP), "cap",
           OFFSETOFEND(ib_uverbs_qp_cap, max_inline_data), sizeof(ib_uverbs_qp_cap), kMandatory,
           &L::kQpCap),
    Const(ID(UVERBS_ATTR_CREATE_QP_TYPE), "type", kMandatory, &kQpTypeNames),
    Flags(ID(UVERBS_ATTR_CREATE_QP_FLAGS), "flags", kOptional),
    Hex(In(ID(UVERBS_ATTR_CREATE_QP_SOURCE_QPN), "source_qpn", 4, kOptional)),
    Fd(ID(UVERBS_ATTR_CREATE_QP_EVENT_FD), "event_fd", UVERBS_OBJECT_ASYNC_EVENT, kRead,
       kOptional),
    Struct(AttrType::kPtrOut, ID(UVERBS_ATTR_CREATE_QP_RESP_CAP), "cap",
           OFFSETOFEND(ib_uverbs_qp_cap, max_inline_data), sizeof(ib_uverbs_qp_cap), kMandatory,
           &L::kQpCap),
    Hex(Out(ID(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM), "qpn", 4, kMandatory)),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kQpDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_QP_HANDLE), "qp", UVERBS_OBJECT_QP, kDestroy, kMandatory),
    Out(ID(UVERBS_ATTR_DESTROY_QP_RESP), "resp", sizeof(ib_uverbs_destroy_qp_resp), kMandatory,
        &L::kDestroyQpResp),
};
constexpr Attr kSrqCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_SRQ_HANDLE), "handle", UVERBS_OBJECT_SRQ, kNew, kMandatory),
    Idr(ID(UVERBS_ATTR_CREATE_SRQ_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Const(ID(UVERBS_ATTR_CREATE_SRQ_TYPE), "type", kMandatory, &kSrqTypeNames),
    Hex(In(ID(UVERBS_ATTR_CREATE_SRQ_USER_HANDLE), "user_handle", 8, kMandatory)),
    In(ID(UVERBS_ATTR_CREATE_SRQ_MAX_WR), "max_wr", 4, kMandatory),
    In(ID(UVERBS_ATTR_CREATE_SRQ_MAX_SGE), "max_sge", 4, kMandatory),
    In(ID(UVERBS_ATTR_CREATE_SRQ_LIMIT), "limit", 4, kMandatory),
    Idr(ID(UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE), "xrcd", UVERBS_OBJECT_XRCD, kRead, kOptional),
    Idr(ID(UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE), "cq", UVERBS_OBJECT_CQ, kRead, kOptional),
    In(ID(UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS), "max_num_tags", 4, kOptional),
    Fd(ID(UVERBS_ATTR_CREATE_SRQ_EVENT_FD), "event_fd", UVERBS_OBJECT_ASYNC_EVENT, kRead,
       kOptional),
    Out(ID(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR), "max_wr", 4, kMandatory),
    Out(ID(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE), "max_sge", 4, kMandatory),
    Hex(Out(ID(UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM), "srqn", 4, kOptional)),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kSrqDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_SRQ_HANDLE), "srq", UVERBS_OBJECT_SRQ, kDestroy, kMandatory),
    Out(ID(UVERBS_ATTR_DESTROY_SRQ_RESP), "resp", sizeof(ib_uverbs_destroy_srq_resp),
        kMandatory, &L::kDestroySrqResp),
};
constexpr Attr kAhDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_AH_HANDLE), "ah", UVERBS_OBJECT_AH, kDestroy, kMandatory),
};
constexpr Attr kMrDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_MR_HANDLE), "mr", UVERBS_OBJECT_MR, kDestroy, kMandatory),
};
constexpr Attr kDmMrReg[] = {
    Idr(ID(UVERBS_ATTR_REG_DM_MR_HANDLE), "handle", UVERBS_OBJECT_MR, kNew, kMandatory),
    Hex(In(ID(UVERBS_ATTR_REG_DM_MR_OFFSET), "offset", 8, kMandatory)),
    In(ID(UVERBS_ATTR_REG_DM_MR_LENGTH), "length", 8, kMandatory),
    Idr(ID(UVERBS_ATTR_REG_DM_MR_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Flags(ID(UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS), "access", kOptional, &kAccessFlagNames),
    Idr(ID(UVERBS_ATTR_REG_DM_MR_DM_HANDLE), "dm", UVERBS_OBJECT_DM, kRead, kMandatory),
    Hex(Out(ID(UVERBS_ATTR_REG_DM_MR_RESP_LKEY), "lkey", 4, kMandatory)),
    Hex(Out(ID(UVERBS_ATTR_REG_DM_MR_RESP_RKEY), "rkey", 4, kMandatory)),
};
// ADVISE_MR's SGE list carries IOVAs of registered MRs, not caller VAs: nothing to translate.
constexpr Attr kAdviseMr[] = {
    Idr(ID(UVERBS_ATTR_ADVISE_MR_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Const(ID(UVERBS_ATTR_ADVISE_MR_ADVICE), "advice", kMandatory),
    Flags(ID(UVERBS_ATTR_ADVISE_MR_FLAGS), "flags", kMandatory),
    Ptr(AttrType::kPtrIn, ID(UVERBS_ATTR_ADVISE_MR_SGE_LIST), "sges", sizeof(ib_uverbs_sge),
        kAnyLen, kMandatory, &L::kSge),
};
constexpr Attr kQueryMr[] = {
    Idr(ID(UVERBS_ATTR_QUERY_MR_HANDLE), "mr", UVERBS_OBJECT_MR, kRead, kMandatory),
    Hex(Out(ID(UVERBS_ATTR_QUERY_MR_RESP_RKEY), "rkey", 4, kMandatory)),
    Hex(Out(ID(UVERBS_ATTR_QUERY_MR_RESP_LKEY), "lkey", 4, kMandatory)),
    Out(ID(UVERBS_ATTR_QUERY_MR_RESP_LENGTH), "length", 8, kMandatory),
    Hex(Out(ID(UVERBS_ATTR_QUERY_MR_RESP_IOVA), "iova", 8, kOptional)),
};
// REG_DMABUF_MR.FD is a PTR_IN u32 carried inline: a dma-buf fd number of the caller, which the
// kernel dma_buf_get()s (ib_umem_dmabuf_get) -- not an FD-type attribute.
constexpr Attr kRegDmabufMr[] = {
    Idr(ID(UVERBS_ATTR_REG_DMABUF_MR_HANDLE), "handle", UVERBS_OBJECT_MR, kNew, kMandatory),
    Idr(ID(UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Hex(In(ID(UVERBS_ATTR_REG_DMABUF_MR_OFFSET), "offset", 8, kMandatory)),
    In(ID(UVERBS_ATTR_REG_DMABUF_MR_LENGTH), "length", 8, kMandatory),
    Hex(In(ID(UVERBS_ATTR_REG_DMABUF_MR_IOVA), "iova", 8, kMandatory)),
    In(ID(UVERBS_ATTR_REG_DMABUF_MR_FD), "fd", 4, kMandatory, AttrMeaning::kFdInline),
    Flags(ID(UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS), "access", kOptional, &kAccessFlagNames),
    Hex(Out(ID(UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY), "lkey", 4, kMandatory)),
    Hex(Out(ID(UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY), "rkey", 4, kMandatory)),
};
constexpr Attr kMwDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_MW_HANDLE), "mw", UVERBS_OBJECT_MW, kDestroy, kMandatory),
};
constexpr Attr kFlowDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_FLOW_HANDLE), "flow", UVERBS_OBJECT_FLOW, kDestroy, kMandatory),
};
constexpr Attr kXrcdDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_XRCD_HANDLE), "xrcd", UVERBS_OBJECT_XRCD, kDestroy, kMandatory),
};
constexpr Attr kRwqIndTblDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_RWQ_IND_TBL_HANDLE), "ind_tbl", UVERBS_OBJECT_RWQ_IND_TBL,
        kDestroy, kMandatory),
};
constexpr Attr kWqCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_WQ_HANDLE), "handle", UVERBS_OBJECT_WQ, kNew, kMandatory),
    Idr(ID(UVERBS_ATTR_CREATE_WQ_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Const(ID(UVERBS_ATTR_CREATE_WQ_TYPE), "type", kMandatory),
    Hex(In(ID(UVERBS_ATTR_CREATE_WQ_USER_HANDLE), "user_handle", 8, kMandatory)),
    In(ID(UVERBS_ATTR_CREATE_WQ_MAX_WR), "max_wr", 4, kMandatory),
    In(ID(UVERBS_ATTR_CREATE_WQ_MAX_SGE), "max_sge", 4, kMandatory),
    Flags(ID(UVERBS_ATTR_CREATE_WQ_FLAGS), "flags", kMandatory),
    Idr(ID(UVERBS_ATTR_CREATE_WQ_CQ_HANDLE), "cq", UVERBS_OBJECT_CQ, kRead, kOptional),
    Fd(ID(UVERBS_ATTR_CREATE_WQ_EVENT_FD), "event_fd", UVERBS_OBJECT_ASYNC_EVENT, kRead,
       kOptional),
    Out(ID(UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR), "max_wr", 4, kMandatory),
    Out(ID(UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE), "max_sge", 4, kMandatory),
    Hex(Out(ID(UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM), "wqn", 4, kOptional)),
    UhwIn(),
    UhwOut(),
};
constexpr Attr kWqDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_WQ_HANDLE), "wq", UVERBS_OBJECT_WQ, kDestroy, kMandatory),
    Out(ID(UVERBS_ATTR_DESTROY_WQ_RESP), "events_reported", 4, kMandatory,
        &L::kDestroyWqRespU32),
};
// ESP flow actions (uverbs_std_types_flow_action.c before their removal): ENCAP points to a
// user-space linked list of ib_uverbs_flow_action_esp_encap the kernel walks.
// The ENUM_IN elements of the ESP attributes, indexed by elem_id, as the kernel declared them
// before ESP flow actions were removed (uverbs_std_types_flow_action.c:
// uverbs_flow_action_esp_keymat[], uverbs_flow_action_esp_replay[]).
constexpr PtrSpec kEspKeymatElems[] = {
    // IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM:
    // UVERBS_ATTR_STRUCT(struct ib_uverbs_flow_action_esp_keymat_aes_gcm, aes_key)
    {OFFSETOFEND(ib_uverbs_flow_action_esp_keymat_aes_gcm, aes_key),
     sizeof(ib_uverbs_flow_action_esp_keymat_aes_gcm), true},
};
constexpr PtrSpec kEspReplayElems[] = {
    {0, 0, false},  // IB_UVERBS_FLOW_ACTION_ESP_REPLAY_NONE: UVERBS_ATTR_NO_DATA()
    // IB_UVERBS_FLOW_ACTION_ESP_REPLAY_BMP:
    // UVERBS_ATTR_STRUCT(struct ib_uverbs_flow_action_esp_replay_bmp, size)
    {OFFSETOFEND(ib_uverbs_flow_action_esp_replay_bmp, size),
     sizeof(ib_uverbs_flow_action_esp_replay_bmp), true},
};
static_assert(std::size(kEspKeymatElems) == IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM + 1);
static_assert(std::size(kEspReplayElems) == IB_UVERBS_FLOW_ACTION_ESP_REPLAY_BMP + 1);
constexpr Attr kFlowActionEspCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE), "handle", UVERBS_OBJECT_FLOW_ACTION, kNew,
        kMandatory),
    Struct(AttrType::kPtrIn, ID(UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS), "attrs",
           OFFSETOFEND(ib_uverbs_flow_action_esp, hard_limit_pkts),
           sizeof(ib_uverbs_flow_action_esp), kMandatory, &L::kFlowActionEsp),
    In(ID(UVERBS_ATTR_FLOW_ACTION_ESP_ESN), "esn", 4, kOptional),
    EnumIn(ID(UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT), "keymat", kMandatory, kEspKeymatElems),
    EnumIn(ID(UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY), "replay", kOptional, kEspReplayElems),
    Struct(AttrType::kPtrIn, ID(UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP), "encap",
           OFFSETOFEND(ib_uverbs_flow_action_esp_encap, type),
           sizeof(ib_uverbs_flow_action_esp_encap), kOptional, &L::kFlowActionEspEncap),
};
constexpr Attr kFlowActionEspModify[] = {
    Idr(ID(UVERBS_ATTR_MODIFY_FLOW_ACTION_ESP_HANDLE), "handle", UVERBS_OBJECT_FLOW_ACTION,
        Access::kWrite, kMandatory),
    Struct(AttrType::kPtrIn, ID(UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS), "attrs",
           OFFSETOFEND(ib_uverbs_flow_action_esp, hard_limit_pkts),
           sizeof(ib_uverbs_flow_action_esp), kOptional, &L::kFlowActionEsp),
    In(ID(UVERBS_ATTR_FLOW_ACTION_ESP_ESN), "esn", 4, kOptional),
    EnumIn(ID(UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT), "keymat", kOptional, kEspKeymatElems),
    EnumIn(ID(UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY), "replay", kOptional, kEspReplayElems),
    Struct(AttrType::kPtrIn, ID(UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP), "encap",
           OFFSETOFEND(ib_uverbs_flow_action_esp_encap, type),
           sizeof(ib_uverbs_flow_action_esp_encap), kOptional, &L::kFlowActionEspEncap),
};
constexpr Attr kFlowActionDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE), "flow_action", UVERBS_OBJECT_FLOW_ACTION,
        kDestroy, kMandatory),
};
constexpr Attr kDmAlloc[] = {
    Idr(ID(UVERBS_ATTR_ALLOC_DM_HANDLE), "handle", UVERBS_OBJECT_DM, kNew, kMandatory),
    In(ID(UVERBS_ATTR_ALLOC_DM_LENGTH), "length", 8, kMandatory),
    In(ID(UVERBS_ATTR_ALLOC_DM_ALIGNMENT), "alignment", 4, kMandatory),
};
constexpr Attr kDmFree[] = {
    Idr(ID(UVERBS_ATTR_FREE_DM_HANDLE), "dm", UVERBS_OBJECT_DM, kDestroy, kMandatory),
};
constexpr Attr kCountersCreate[] = {
    Idr(ID(UVERBS_ATTR_CREATE_COUNTERS_HANDLE), "handle", UVERBS_OBJECT_COUNTERS, kNew,
        kMandatory),
};
constexpr Attr kCountersDestroy[] = {
    Idr(ID(UVERBS_ATTR_DESTROY_COUNTERS_HANDLE), "counters", UVERBS_OBJECT_COUNTERS, kDestroy,
        kMandatory),
};
constexpr Attr kCountersRead[] = {
    Idr(ID(UVERBS_ATTR_READ_COUNTERS_HANDLE), "counters", UVERBS_OBJECT_COUNTERS, kRead,
        kMandatory),
    OutMin(ID(UVERBS_ATTR_READ_COUNTERS_BUFF), "buff", 0, kMandatory),
    Flags(ID(UVERBS_ATTR_READ_COUNTERS_FLAGS), "flags", kOptional),
};
constexpr Attr kAsyncEventAlloc[] = {
    Fd(ID(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE), "fd", UVERBS_OBJECT_ASYNC_EVENT, kNew,
       kMandatory),
};

// --- mlx5 driver methods --------------------------------------------------------------------

// DEVX PRM mailboxes: MLX5_ST_SZ_BYTES(general_obj_in_cmd_hdr) = 16,
// MLX5_ST_SZ_BYTES(general_obj_out_cmd_hdr) = 16 (include/linux/mlx5/mlx5_ifc.h).
constexpr uint16_t kPrmInHdr = 16, kPrmOutHdr = 16;
constexpr Attr kDevxOther[] = {
    InMin(ID(MLX5_IB_ATTR_DEVX_OTHER_CMD_IN), "cmd_in", kPrmInHdr, kMandatory,
          AttrMeaning::kPrmMailbox),
    OutMin(ID(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT), "cmd_out", kPrmOutHdr, kMandatory,
           AttrMeaning::kPrmMailbox),
};
constexpr Attr kDevxQueryUar[] = {
    In(ID(MLX5_IB_ATTR_DEVX_QUERY_UAR_USER_IDX), "user_idx", 4, kMandatory),
    Out(ID(MLX5_IB_ATTR_DEVX_QUERY_UAR_DEV_IDX), "dev_idx", 4, kMandatory),
};
constexpr Attr kDevxQueryEqn[] = {
    In(ID(MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC), "user_vec", 4, kMandatory),
    Hex(Out(ID(MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN), "dev_eqn", 4, kMandatory)),
};
// SUBSCRIBE_EVENT.FD_NUM is an eventfd number of the caller (eventfd_ctx_fdget), inline u32.
constexpr Attr kDevxSubscribeEvent[] = {
    Fd(ID(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_HANDLE), "event_fd",
       MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD, kRead, kMandatory),
    Idr(ID(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_OBJ_HANDLE), "obj", MLX5_IB_OBJECT_DEVX_OBJ, kRead,
        kOptional),
    InMin(ID(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_TYPE_NUM_LIST), "types", sizeof(uint16_t),
          kMandatory),
    Hex(In(ID(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_COOKIE), "cookie", 8, kOptional)),
    In(ID(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_NUM), "fd_num", 4, kOptional,
       AttrMeaning::kFdInline),
};
constexpr Attr kDevxObjCreate[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE), "handle", MLX5_IB_OBJECT_DEVX_OBJ, kNew,
        kMandatory),
    InMin(ID(MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN), "cmd_in", kPrmInHdr, kMandatory,
          AttrMeaning::kPrmMailbox),
    OutMin(ID(MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT), "cmd_out", kPrmOutHdr, kMandatory,
           AttrMeaning::kPrmMailbox),
};
constexpr Attr kDevxObjDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE), "obj", MLX5_IB_OBJECT_DEVX_OBJ, kDestroy,
        kMandatory),
};
constexpr Attr kDevxObjModify[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE), "obj", kAnyObject, kRead, kMandatory),
    InMin(ID(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN), "cmd_in", kPrmInHdr, kMandatory,
          AttrMeaning::kPrmMailbox),
    OutMin(ID(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT), "cmd_out", kPrmOutHdr, kMandatory,
           AttrMeaning::kPrmMailbox),
};
constexpr Attr kDevxObjQuery[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE), "obj", kAnyObject, kRead, kMandatory),
    InMin(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN), "cmd_in", kPrmInHdr, kMandatory,
          AttrMeaning::kPrmMailbox),
    OutMin(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT), "cmd_out", kPrmOutHdr, kMandatory,
           AttrMeaning::kPrmMailbox),
};
constexpr Attr kDevxObjAsyncQuery[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_HANDLE), "obj", kAnyObject, kRead, kMandatory),
    InMin(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_CMD_IN), "cmd_in", kPrmInHdr, kMandatory,
          AttrMeaning::kPrmMailbox),
    Const(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_OUT_LEN), "out_len", kMandatory),
    Fd(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_FD), "async_fd", MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD,
       kRead, kMandatory),
    Hex(In(ID(MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_WR_ID), "wr_id", 8, kMandatory)),
};
// UMEM_REG.ADDR is a user VA the kernel pins for LEN bytes (devx_umem_get: ib_umem_get(addr,
// size)).
constexpr Attr kDevxUmemReg[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE), "handle", MLX5_IB_OBJECT_DEVX_UMEM, kNew,
        kMandatory),
    Hex(In(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR), "addr", 8, kMandatory, AttrMeaning::kPinnedVa)),
    In(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_LEN), "len", 8, kMandatory, AttrMeaning::kPinnedLength),
    // devx_umem_get: with a dma-buf fd, ADDR is an offset into it (ib_umem_dmabuf_get_pinned).
    WithMeaning(RawFd(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD), "dmabuf_fd", kOptional),
                AttrMeaning::kDmabufFd),
    Flags(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_ACCESS), "access", kOptional, &kAccessFlagNames),
    Const(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_PGSZ_BITMAP), "pgsz_bitmap", kOptional),
    Out(ID(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID), "umem_id", 4, kMandatory),
};
constexpr Attr kDevxUmemDereg[] = {
    Idr(ID(MLX5_IB_ATTR_DEVX_UMEM_DEREG_HANDLE), "umem", MLX5_IB_OBJECT_DEVX_UMEM, kDestroy,
        kMandatory),
};
constexpr Attr kDevxAsyncCmdFdAlloc[] = {
    Fd(ID(MLX5_IB_ATTR_DEVX_ASYNC_CMD_FD_ALLOC_HANDLE), "fd", MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD,
       kNew, kMandatory),
};
constexpr Attr kDevxAsyncEventFdAlloc[] = {
    Fd(ID(MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_HANDLE), "fd",
       MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD, kNew, kMandatory),
    Flags(ID(MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_FLAGS), "flags", kMandatory),
};
constexpr Attr kDmQuery[] = {
    Idr(ID(MLX5_IB_ATTR_QUERY_DM_REQ_HANDLE), "dm", UVERBS_OBJECT_DM, kRead, kMandatory),
    Hex(Out(ID(MLX5_IB_ATTR_QUERY_DM_RESP_START_OFFSET), "start_offset", 8, kMandatory)),
    Out(ID(MLX5_IB_ATTR_QUERY_DM_RESP_PAGE_INDEX), "page_index", 2, kMandatory),
    Out(ID(MLX5_IB_ATTR_QUERY_DM_RESP_LENGTH), "length", 8, kMandatory),
};
constexpr Attr kDmMapOpAddr[] = {
    Idr(ID(MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_HANDLE), "dm", UVERBS_OBJECT_DM, kRead, kMandatory),
    In(ID(MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_OP), "op", 1, kMandatory),
    Hex(Out(ID(MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_START_OFFSET), "start_offset", 8, kMandatory)),
    Out(ID(MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_PAGE_INDEX), "page_index", 2, kOptional),
};
// UVERBS_ATTR_SIZE(1, sizeof(struct mlx5_ib_match_params)) in hw/mlx5/fs.c: the uapi struct of
// MLX5_IB_DW_MATCH_PARAM (0xA0) words, 640 bytes (a whole fte_match_param, misc4/misc5 too).
constexpr uint16_t kMatchParams = sizeof(mlx5_ib_match_params);
static_assert(kMatchParams == 0xA0 * 4);
// MLX5_IB_CREATE_FLOW_MAX_FLOW_ACTIONS (hw/mlx5/fs.c): UVERBS_ATTR_IDRS_ARR(..., 1, 2, ...);
// uverbs_process_idrs_array() refuses a longer array with EINVAL.
constexpr uint16_t kMaxFlowActions = 2;
constexpr Attr kMlx5CreateFlow[] = {
    Idr(ID(MLX5_IB_ATTR_CREATE_FLOW_HANDLE), "handle", UVERBS_OBJECT_FLOW, kNew, kMandatory),
    Ptr(AttrType::kPtrIn, ID(MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE), "match", 1, kMatchParams,
        kMandatory),
    Idr(ID(MLX5_IB_ATTR_CREATE_FLOW_MATCHER), "matcher", MLX5_IB_OBJECT_FLOW_MATCHER, kRead,
        kMandatory),
    Idr(ID(MLX5_IB_ATTR_CREATE_FLOW_DEST_QP), "dest_qp", UVERBS_OBJECT_QP, kRead, kOptional),
    Idr(ID(MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX), "dest_devx", MLX5_IB_OBJECT_DEVX_OBJ, kRead,
        kOptional),
    Idrs(ID(MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS), "actions", UVERBS_OBJECT_FLOW_ACTION,
         kRead, 1, kMaxFlowActions, kOptional),
    In(ID(MLX5_IB_ATTR_CREATE_FLOW_TAG), "tag", 4, kOptional),
    Idrs(ID(MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX), "counters", MLX5_IB_OBJECT_DEVX_OBJ,
         kRead, 1, 1, kOptional),
    InMin(ID(MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX_OFFSET), "counters_offset",
          sizeof(uint32_t), kOptional),
    Flags(ID(MLX5_IB_ATTR_CREATE_FLOW_FLAGS), "flags", kOptional),
};
constexpr Attr kMlx5DestroyFlow[] = {
    Idr(ID(MLX5_IB_ATTR_DESTROY_FLOW_HANDLE), "flow", UVERBS_OBJECT_FLOW, kDestroy, kMandatory),
};
// MLX5_UN_SZ_BYTES(set_add_copy_action_in_auto) = 8.
constexpr Attr kMlx5CreateModifyHeader[] = {
    Idr(ID(MLX5_IB_ATTR_CREATE_MODIFY_HEADER_HANDLE), "handle", UVERBS_OBJECT_FLOW_ACTION, kNew,
        kMandatory),
    InMin(ID(MLX5_IB_ATTR_CREATE_MODIFY_HEADER_ACTIONS_PRM), "actions", 8, kMandatory,
          AttrMeaning::kPrmMailbox),
    Const(ID(MLX5_IB_ATTR_CREATE_MODIFY_HEADER_FT_TYPE), "ft_type", kMandatory),
};
constexpr Attr kMlx5CreatePacketReformat[] = {
    Idr(ID(MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_HANDLE), "handle", UVERBS_OBJECT_FLOW_ACTION,
        kNew, kMandatory),
    InMin(ID(MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF), "data", 1, kOptional),
    Const(ID(MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_TYPE), "type", kMandatory),
    Const(ID(MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_FT_TYPE), "ft_type", kMandatory),
};
// mlx5_ib_flow_type[] (hw/mlx5/fs.c), indexed by enum mlx5_ib_flow_type.
constexpr PtrSpec kFlowTypeElems[] = {
    {sizeof(uint16_t), sizeof(uint16_t), false},  // MLX5_IB_FLOW_TYPE_NORMAL: the priority
    {0, 0, false},  // MLX5_IB_FLOW_TYPE_SNIFFER: UVERBS_ATTR_NO_DATA()
    {0, 0, false},  // MLX5_IB_FLOW_TYPE_ALL_DEFAULT: UVERBS_ATTR_NO_DATA()
    {0, 0, false},  // MLX5_IB_FLOW_TYPE_MC_DEFAULT: UVERBS_ATTR_NO_DATA()
};
static_assert(std::size(kFlowTypeElems) == MLX5_IB_FLOW_TYPE_MC_DEFAULT + 1);
constexpr Attr kMlx5FlowMatcherCreate[] = {
    Idr(ID(MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE), "handle", MLX5_IB_OBJECT_FLOW_MATCHER, kNew,
        kMandatory),
    Ptr(AttrType::kPtrIn, ID(MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK), "mask", 1, kMatchParams,
        kMandatory),
    EnumIn(ID(MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE), "flow_type", kMandatory, kFlowTypeElems),
    In(ID(MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA), "criteria", 1, kMandatory),
    Flags(ID(MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS), "flags", kOptional),
    Const(ID(MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE), "ft_type", kOptional),
};
constexpr Attr kMlx5FlowMatcherDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_FLOW_MATCHER_DESTROY_HANDLE), "matcher", MLX5_IB_OBJECT_FLOW_MATCHER,
        kDestroy, kMandatory),
};
constexpr Attr kMlx5SteeringAnchorCreate[] = {
    Idr(ID(MLX5_IB_ATTR_STEERING_ANCHOR_CREATE_HANDLE), "handle",
        MLX5_IB_OBJECT_STEERING_ANCHOR, kNew, kMandatory),
    Const(ID(MLX5_IB_ATTR_STEERING_ANCHOR_FT_TYPE), "ft_type", kMandatory),
    In(ID(MLX5_IB_ATTR_STEERING_ANCHOR_PRIORITY), "priority", 2, kMandatory),
    // The kernel declares FT_ID UVERBS_ATTR_PTR_IN(u32) but writes the table id to it with
    // uverbs_copy_to() (hw/mlx5/fs.c, STEERING_ANCHOR_CREATE); rdma-core sends a pointer
    // (fill_attr_out, mlx5_verbs.jsonl). Same length rule; an output pointer to translate.
    Out(ID(MLX5_IB_ATTR_STEERING_ANCHOR_FT_ID), "ft_id", 4, kMandatory),
};
constexpr Attr kMlx5SteeringAnchorDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_STEERING_ANCHOR_DESTROY_HANDLE), "anchor",
        MLX5_IB_OBJECT_STEERING_ANCHOR, kDestroy, kMandatory),
};
constexpr Attr kMlx5VarAlloc[] = {
    Idr(ID(MLX5_IB_ATTR_VAR_OBJ_ALLOC_HANDLE), "handle", MLX5_IB_OBJECT_VAR, kNew, kMandatory),
    Out(ID(MLX5_IB_ATTR_VAR_OBJ_ALLOC_PAGE_ID), "page_id", 4, kMandatory),
    WithMeaning(Out(ID(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_LENGTH), "mmap_length", 4, kMandatory),
                AttrMeaning::kMmapEntryLength),
    WithMeaning(Hex(Out(ID(MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_OFFSET), "mmap_offset", 8, kMandatory)),
                AttrMeaning::kMmapEntryOffset),
};
constexpr Attr kMlx5VarDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_VAR_OBJ_DESTROY_HANDLE), "var", MLX5_IB_OBJECT_VAR, kDestroy,
        kMandatory),
};
// UAR_OBJ_ALLOC (and VAR_OBJ_ALLOC above) return an mmap offset in the rdma_user_mmap_entry
// range of this file's ucontext; the app mmaps it on the same fd (mlx5_ib_mmap_offset) while
// the object lives.
constexpr Attr kMlx5UarAlloc[] = {
    Idr(ID(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE), "handle", MLX5_IB_OBJECT_UAR, kNew, kMandatory),
    Const(ID(MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE), "type", kMandatory),
    Out(ID(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID), "page_id", 4, kMandatory),
    WithMeaning(Out(ID(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH), "mmap_length", 4, kMandatory),
                AttrMeaning::kMmapEntryLength),
    WithMeaning(Hex(Out(ID(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET), "mmap_offset", 8, kMandatory)),
                AttrMeaning::kMmapEntryOffset),
};
constexpr Attr kMlx5UarDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE), "uar", MLX5_IB_OBJECT_UAR, kDestroy,
        kMandatory),
};
// MLX5_ST_SZ_BYTES(set_pp_rate_limit_context) = 0x30.
constexpr Attr kMlx5PpAlloc[] = {
    Idr(ID(MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE), "handle", MLX5_IB_OBJECT_PP, kNew, kMandatory),
    Ptr(AttrType::kPtrIn, ID(MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX), "ctx", 1, 0x30, kMandatory),
    Flags(ID(MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS), "flags", kMandatory),
    Out(ID(MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX), "index", 2, kMandatory),
};
constexpr Attr kMlx5PpDestroy[] = {
    Idr(ID(MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE), "pp", MLX5_IB_OBJECT_PP, kDestroy, kMandatory),
};
constexpr Attr kMlx5QueryPort[] = {
    In(ID(MLX5_IB_ATTR_QUERY_PORT_PORT_NUM), "port", 4, kMandatory),
    Struct(AttrType::kPtrOut, ID(MLX5_IB_ATTR_QUERY_PORT), "info",
           OFFSETOFEND(mlx5_ib_uapi_query_port, reg_c0), sizeof(mlx5_ib_uapi_query_port),
           kMandatory, &D::kMlx5QueryPortUapi),
};
constexpr Attr kMlx5GetDataDirectSysfsPath[] = {
    OutMin(kMlx5IbAttrGetDataDirectSysfsPath, "MLX5_IB_ATTR_GET_DATA_DIRECT_SYSFS_PATH", "path",
           0, kMandatory),
};
constexpr Attr kMlx5PdQuery[] = {
    Idr(ID(MLX5_IB_ATTR_QUERY_PD_HANDLE), "pd", UVERBS_OBJECT_PD, kRead, kMandatory),
    Hex(Out(ID(MLX5_IB_ATTR_QUERY_PD_RESP_PDN), "pdn", 4, kMandatory)),
};

// --- the method table -----------------------------------------------------------------------

#define M(obj, m, sn) .object = obj, .id = m, .name = #m, .short_name = sn
#define MLX5M(obj, m, sn) M(obj, m, sn), .driver = Driver::kMlx5

constexpr Method kMethods[] = {
    // DEVICE
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, "INVOKE_WRITE"), .attrs = kInvokeWrite,
     .has_udata = true, .policy = kAllow,
     .path = "every legacy command on kernels >= 5.x (see the write table)"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES, "DEVICE.INFO_HANDLES"),
     .attrs = kInfoHandles, .policy = kAllow, .path = "lists this file's handles of one type"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, "DEVICE.QUERY_PORT"), .attrs = kQueryPort,
     .policy = kAllow, .path = "ibv_query_port"},
    {.object = UVERBS_OBJECT_DEVICE, .id = kUverbsMethodQueryPortSpeed,
     .name = "UVERBS_METHOD_QUERY_PORT_SPEED", .short_name = "DEVICE.QUERY_PORT_SPEED",
     .attrs = kQueryPortSpeed, .policy = kAllow,
     .path = "ibv_query_port_speed (rdma-core 62+; a kernel without it answers EPROTONOSUPPORT)"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, "DEVICE.GET_CONTEXT"),
     .attrs = kGetContext, .has_udata = true, .drivers = {.mlx5 = &D::kMlx5AllocUcontext},
     .policy = kAllow, .path = "ibv_open_device"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, "DEVICE.QUERY_CONTEXT"),
     .attrs = kQueryContext, .policy = kAllow, .path = "ibv_import_device"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE, "DEVICE.QUERY_GID_TABLE"),
     .attrs = kQueryGidTable, .policy = kAllow, .path = "ibv_query_gid_table"},
    {M(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY, "DEVICE.QUERY_GID_ENTRY"),
     .attrs = kQueryGidEntry, .policy = kAllow, .path = "ibv_query_gid, ibv_query_gid_ex"},
    // Core objects
    {M(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, "PD.DESTROY"), .attrs = kPdDestroy,
     .policy = kAllow, .path = "ibv_dealloc_pd"},
    {M(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, "CQ.CREATE"), .attrs = kCqCreate,
     .has_udata = true, .drivers = {.mlx5 = &D::kMlx5CreateCq, .rxe = &D::kRxeCreateCq},
     .policy = kAllow, .path = "ibv_create_cq, ibv_create_cq_ex"},
    {M(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, "CQ.DESTROY"), .attrs = kCqDestroy,
     .policy = kAllow, .path = "ibv_destroy_cq"},
    {M(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, "QP.CREATE"), .attrs = kQpCreate,
     .has_udata = true, .drivers = {.mlx5 = &D::kMlx5CreateQp, .rxe = &D::kRxeCreateQp},
     .policy = kAllow, .path = "ibv_create_qp, ibv_create_qp_ex"},
    {M(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, "QP.DESTROY"), .attrs = kQpDestroy,
     .policy = kAllow, .path = "ibv_destroy_qp"},
    {M(UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE, "SRQ.CREATE"), .attrs = kSrqCreate,
     .has_udata = true, .drivers = {.mlx5 = &D::kMlx5CreateSrq, .rxe = &D::kRxeCreateSrq},
     .policy = kAllow, .path = "ibv_create_srq, ibv_create_srq_ex"},
    {M(UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY, "SRQ.DESTROY"), .attrs = kSrqDestroy,
     .policy = kAllow, .path = "ibv_destroy_srq"},
    {M(UVERBS_OBJECT_AH, UVERBS_METHOD_AH_DESTROY, "AH.DESTROY"), .attrs = kAhDestroy,
     .policy = kAllow, .path = "ibv_destroy_ah"},
    {M(UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG, "MR.DM_MR_REG"), .attrs = kDmMrReg,
     .policy = kAllow, .path = "ibv_reg_dm_mr"},
    {M(UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, "MR.DESTROY"), .attrs = kMrDestroy,
     .policy = kAllow, .path = "ibv_dereg_mr"},
    {M(UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR, "MR.ADVISE"), .attrs = kAdviseMr,
     .policy = kAllow, .path = "ibv_advise_mr (ODP prefetch)"},
    {M(UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR, "MR.QUERY"), .attrs = kQueryMr,
     .policy = kAllow, .path = "ibv_reg_dm_mr, mlx5dv"},
    {M(UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, "MR.REG_DMABUF"), .attrs = kRegDmabufMr,
     .policy = kAllow, .path = "ibv_reg_dmabuf_mr (GPUDirect via dma-buf)"},
    {M(UVERBS_OBJECT_MW, UVERBS_METHOD_MW_DESTROY, "MW.DESTROY"), .attrs = kMwDestroy,
     .policy = kAllow, .path = "ibv_dealloc_mw"},
    {M(UVERBS_OBJECT_FLOW, UVERBS_METHOD_FLOW_DESTROY, "FLOW.DESTROY"), .attrs = kFlowDestroy,
     .policy = kAllow, .path = "ibv_destroy_flow"},
    {M(UVERBS_OBJECT_XRCD, UVERBS_METHOD_XRCD_DESTROY, "XRCD.DESTROY"), .attrs = kXrcdDestroy,
     .policy = kAllow, .path = "ibv_close_xrcd"},
    {M(UVERBS_OBJECT_RWQ_IND_TBL, UVERBS_METHOD_RWQ_IND_TBL_DESTROY, "RWQ_IND_TBL.DESTROY"),
     .attrs = kRwqIndTblDestroy, .policy = kAllow, .path = "ibv_destroy_rwq_ind_table"},
    {M(UVERBS_OBJECT_WQ, UVERBS_METHOD_WQ_CREATE, "WQ.CREATE"), .attrs = kWqCreate,
     .has_udata = true, .drivers = {.mlx5 = &D::kMlx5CreateWq}, .policy = kAllow,
     .path = "ibv_create_wq"},
    {M(UVERBS_OBJECT_WQ, UVERBS_METHOD_WQ_DESTROY, "WQ.DESTROY"), .attrs = kWqDestroy,
     .policy = kAllow, .path = "ibv_destroy_wq"},
    {M(UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_CREATE, "FLOW_ACTION.ESP_CREATE"),
     .attrs = kFlowActionEspCreate, .policy = policies::kEsp,
     .path = "ibv_create_flow_action_esp (removed from the kernel)"},
    {M(UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_DESTROY, "FLOW_ACTION.DESTROY"),
     .attrs = kFlowActionDestroy, .policy = kAllow, .path = "ibv_destroy_flow_action"},
    {M(UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_MODIFY, "FLOW_ACTION.ESP_MODIFY"),
     .attrs = kFlowActionEspModify, .policy = policies::kEsp,
     .path = "ibv_modify_flow_action_esp (removed from the kernel)"},
    {M(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, "DM.ALLOC"), .attrs = kDmAlloc,
     .policy = kAllow, .path = "ibv_alloc_dm (device memory; mlx5 MEMIC)"},
    {M(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE, "DM.FREE"), .attrs = kDmFree, .policy = kAllow,
     .path = "ibv_free_dm"},
    {M(UVERBS_OBJECT_COUNTERS, UVERBS_METHOD_COUNTERS_CREATE, "COUNTERS.CREATE"),
     .attrs = kCountersCreate, .policy = policies::kCounters, .path = "ibv_create_counters"},
    {M(UVERBS_OBJECT_COUNTERS, UVERBS_METHOD_COUNTERS_DESTROY, "COUNTERS.DESTROY"),
     .attrs = kCountersDestroy, .policy = kAllow, .path = "ibv_destroy_counters"},
    {M(UVERBS_OBJECT_COUNTERS, UVERBS_METHOD_COUNTERS_READ, "COUNTERS.READ"),
     .attrs = kCountersRead, .policy = kAllow, .path = "ibv_read_counters"},
    {M(UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, "ASYNC_EVENT.ALLOC"),
     .attrs = kAsyncEventAlloc, .policy = kAllow,
     .path = "ibv_open_device (the async event fd)"},

    // mlx5 methods on core objects
    {MLX5M(UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT, "MLX5.DEVICE.QUERY_PORT"),
     .attrs = kMlx5QueryPort, .policy = policies::kMlx5QueryPort,
     .path = "mlx5dv_query_port (steering, e-switch)"},
    {.object = UVERBS_OBJECT_DEVICE, .id = kMlx5IbMethodGetDataDirectSysfsPath,
     .name = "MLX5_IB_METHOD_GET_DATA_DIRECT_SYSFS_PATH",
     .short_name = "MLX5.DEVICE.GET_DATA_DIRECT_SYSFS_PATH", .driver = Driver::kMlx5,
     .attrs = kMlx5GetDataDirectSysfsPath, .policy = policies::kDataDirectPath,
     .path = "mlx5dv_get_data_direct_sysfs_path (6.12+)"},
    {MLX5M(UVERBS_OBJECT_PD, MLX5_IB_METHOD_PD_QUERY, "MLX5.PD.QUERY"), .attrs = kMlx5PdQuery,
     .policy = kAllow, .path = "mlx5dv_init_obj(PD)"},
    {MLX5M(UVERBS_OBJECT_DM, MLX5_IB_METHOD_DM_MAP_OP_ADDR, "MLX5.DM.MAP_OP_ADDR"),
     .attrs = kDmMapOpAddr, .policy = kAllow, .path = "mlx5dv_dm_map_op_addr"},
    {MLX5M(UVERBS_OBJECT_DM, MLX5_IB_METHOD_DM_QUERY, "MLX5.DM.QUERY"), .attrs = kDmQuery,
     .policy = kAllow, .path = "mlx5dv_init_obj(DM)"},
    {MLX5M(UVERBS_OBJECT_FLOW, MLX5_IB_METHOD_CREATE_FLOW, "MLX5.FLOW.CREATE"),
     .attrs = kMlx5CreateFlow, .policy = policies::kMlx5FlowSteering,
     .path = "mlx5dv_create_flow"},
    {MLX5M(UVERBS_OBJECT_FLOW, MLX5_IB_METHOD_DESTROY_FLOW, "MLX5.FLOW.DESTROY"),
     .attrs = kMlx5DestroyFlow, .policy = kAllow, .path = "mlx5dv flow destroy"},
    {MLX5M(UVERBS_OBJECT_FLOW_ACTION, MLX5_IB_METHOD_FLOW_ACTION_CREATE_MODIFY_HEADER,
           "MLX5.FLOW_ACTION.CREATE_MODIFY_HEADER"),
     .attrs = kMlx5CreateModifyHeader, .policy = policies::kMlx5FlowSteering,
     .path = "mlx5dv_create_flow_action_modify_header"},
    {MLX5M(UVERBS_OBJECT_FLOW_ACTION, MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT,
           "MLX5.FLOW_ACTION.CREATE_PACKET_REFORMAT"),
     .attrs = kMlx5CreatePacketReformat, .policy = policies::kMlx5FlowSteering,
     .path = "mlx5dv_create_flow_action_packet_reformat"},
    // mlx5 objects
    {MLX5M(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_OTHER, "MLX5.DEVX.OTHER"),
     .attrs = kDevxOther, .policy = policies::kDevx,
     .path = "mlx5dv_devx_general_cmd (rdma-core queries HCA caps at open; tolerates failure)"},
    {MLX5M(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_UAR, "MLX5.DEVX.QUERY_UAR"),
     .attrs = kDevxQueryUar, .policy = policies::kDevx, .path = "mlx5dv_devx_query_uar"},
    {MLX5M(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_EQN, "MLX5.DEVX.QUERY_EQN"),
     .attrs = kDevxQueryEqn, .policy = policies::kDevx, .path = "mlx5dv_devx_query_eqn"},
    {MLX5M(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT,
           "MLX5.DEVX.SUBSCRIBE_EVENT"),
     .attrs = kDevxSubscribeEvent, .policy = policies::kDevx,
     .path = "mlx5dv_devx_subscribe_devx_event"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_CREATE, "MLX5.DEVX_OBJ.CREATE"),
     .attrs = kDevxObjCreate, .policy = policies::kDevx, .path = "mlx5dv_devx_obj_create"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY, "MLX5.DEVX_OBJ.DESTROY"),
     .attrs = kDevxObjDestroy, .policy = policies::kDevx, .path = "mlx5dv_devx_obj_destroy"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_MODIFY, "MLX5.DEVX_OBJ.MODIFY"),
     .attrs = kDevxObjModify, .policy = policies::kDevx, .path = "mlx5dv_devx_obj_modify"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_QUERY, "MLX5.DEVX_OBJ.QUERY"),
     .attrs = kDevxObjQuery, .policy = policies::kDevx, .path = "mlx5dv_devx_obj_query"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_ASYNC_QUERY,
           "MLX5.DEVX_OBJ.ASYNC_QUERY"),
     .attrs = kDevxObjAsyncQuery, .policy = policies::kDevx,
     .path = "mlx5dv_devx_obj_query_async"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_REG, "MLX5.DEVX_UMEM.REG"),
     .attrs = kDevxUmemReg, .policy = policies::kDevxUmem, .path = "mlx5dv_devx_umem_reg"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_DEREG, "MLX5.DEVX_UMEM.DEREG"),
     .attrs = kDevxUmemDereg, .policy = policies::kDevxUmem, .path = "mlx5dv_devx_umem_dereg"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD, MLX5_IB_METHOD_DEVX_ASYNC_CMD_FD_ALLOC,
           "MLX5.DEVX_ASYNC_CMD_FD.ALLOC"),
     .attrs = kDevxAsyncCmdFdAlloc, .policy = policies::kDevxFd,
     .path = "mlx5dv_devx_create_cmd_comp"},
    {MLX5M(MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD, MLX5_IB_METHOD_DEVX_ASYNC_EVENT_FD_ALLOC,
           "MLX5.DEVX_ASYNC_EVENT_FD.ALLOC"),
     .attrs = kDevxAsyncEventFdAlloc, .policy = policies::kDevxFd,
     .path = "mlx5dv_devx_create_event_channel"},
    {MLX5M(MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_CREATE,
           "MLX5.FLOW_MATCHER.CREATE"),
     .attrs = kMlx5FlowMatcherCreate, .policy = policies::kMlx5FlowSteering,
     .path = "mlx5dv_create_flow_matcher"},
    {MLX5M(MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_DESTROY,
           "MLX5.FLOW_MATCHER.DESTROY"),
     .attrs = kMlx5FlowMatcherDestroy, .policy = kAllow,
     .path = "mlx5dv_destroy_flow_matcher"},
    {MLX5M(MLX5_IB_OBJECT_VAR, MLX5_IB_METHOD_VAR_OBJ_ALLOC, "MLX5.VAR.ALLOC"),
     .attrs = kMlx5VarAlloc, .policy = policies::kVar, .path = "mlx5dv_alloc_var"},
    {MLX5M(MLX5_IB_OBJECT_VAR, MLX5_IB_METHOD_VAR_OBJ_DESTROY, "MLX5.VAR.DESTROY"),
     .attrs = kMlx5VarDestroy, .policy = policies::kVar, .path = "mlx5dv_free_var"},
    {MLX5M(MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_ALLOC, "MLX5.PP.ALLOC"),
     .attrs = kMlx5PpAlloc, .policy = policies::kPacketPacing, .path = "mlx5dv_pp_alloc"},
    {MLX5M(MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_DESTROY, "MLX5.PP.DESTROY"),
     .attrs = kMlx5PpDestroy, .policy = policies::kPacketPacing, .path = "mlx5dv_pp_free"},
    {MLX5M(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC, "MLX5.UAR.ALLOC"),
     .attrs = kMlx5UarAlloc, .policy = kAllow,
     .path = "mlx5 provider: dynamic doorbell pages at open and per QP"},
    {MLX5M(MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY, "MLX5.UAR.DESTROY"),
     .attrs = kMlx5UarDestroy, .policy = kAllow, .path = "mlx5 provider"},
    {MLX5M(MLX5_IB_OBJECT_STEERING_ANCHOR, MLX5_IB_METHOD_STEERING_ANCHOR_CREATE,
           "MLX5.STEERING_ANCHOR.CREATE"),
     .attrs = kMlx5SteeringAnchorCreate, .policy = policies::kMlx5FlowSteering,
     .path = "mlx5dv_create_steering_anchor"},
    {MLX5M(MLX5_IB_OBJECT_STEERING_ANCHOR, MLX5_IB_METHOD_STEERING_ANCHOR_DESTROY,
           "MLX5.STEERING_ANCHOR.DESTROY"),
     .attrs = kMlx5SteeringAnchorDestroy, .policy = kAllow,
     .path = "mlx5dv_destroy_steering_anchor"},
};
#undef M
#undef MLX5M

// Driver attributes added to core methods (ADD_UVERBS_ATTRIBUTES_SIMPLE).
constexpr Attr kMlx5CqCreateAttrs[] = {
    In(kMlx5IbAttrCreateCqUarIndex, "MLX5_IB_ATTR_CREATE_CQ_UAR_INDEX", "uar_index", 4,
       kOptional),
};
constexpr uint16_t kMlx5DmTypeMemic = MLX5_IB_UAPI_DM_TYPE_MEMIC;
constexpr Attr kMlx5DmAllocAttrs[] = {
    Hex(Out(ID(MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET), "start_offset", 8, kMandatory)),
    Out(ID(MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX), "page_index", 2, kOptional),
    Const(ID(MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE), "type", kOptional),
};
constexpr Attr kMlx5QueryContextAttrs[] = {
    Struct(AttrType::kPtrOut, ID(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX), "uctx",
           OFFSETOFEND(mlx5_ib_alloc_ucontext_resp, dump_fill_mkey),
           sizeof(mlx5_ib_alloc_ucontext_resp), kMandatory, &D::kMlx5AllocUcontextResp),
};
constexpr Attr kMlx5RegDmabufMrAttrs[] = {
    Flags(kMlx5IbAttrRegDmabufMrAccessFlags, "MLX5_IB_ATTR_REG_DMABUF_MR_ACCESS_FLAGS",
          "mlx5_access", kOptional),
};
// The mlx5 IPsec flags of ESP flow actions (hw/mlx5/fs.c in kernels that still had ESP).
constexpr Attr kMlx5FlowActionEspAttrs[] = {
    Flags(ID(MLX5_IB_ATTR_CREATE_FLOW_ACTION_FLAGS), "mlx5_flags", kOptional),
};
static_assert(kMlx5DmTypeMemic == 0);

constexpr DriverAttrs kDriverAttrs[] = {
    {Driver::kMlx5, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, kMlx5CqCreateAttrs},
    {Driver::kMlx5, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, kMlx5DmAllocAttrs},
    {Driver::kMlx5, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, kMlx5QueryContextAttrs},
    {Driver::kMlx5, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, kMlx5RegDmabufMrAttrs},
    {Driver::kMlx5, UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_CREATE,
     kMlx5FlowActionEspAttrs},
};

#undef ID
#undef OFFSETOFEND

}  // namespace

std::span<const Object> Objects() { return kObjects; }
std::span<const Method> Methods() { return kMethods; }
std::span<const DriverAttrs> DriverAttributes() { return kDriverAttrs; }

namespace {

// Methods are looked up on every ioctl: index them by (object slot, method id). Core objects
// are 0..16; mlx5 objects are 0x1000..0x1009 (slots 17..). Method ids are small for core
// methods and 0x1000+ for driver methods; each slot keeps its methods in a short list.
constexpr size_t kCoreObjects = UVERBS_OBJECT_ASYNC_EVENT + 1;
constexpr size_t kMlx5Objects = MLX5_IB_OBJECT_STEERING_ANCHOR - MLX5_IB_OBJECT_DEVX + 1;
constexpr size_t kSlots = kCoreObjects + kMlx5Objects;
constexpr size_t kMaxPerSlot = 12;

constexpr int SlotOf(ObjectId object) {
  if (object < kCoreObjects) return object;
  if (object >= MLX5_IB_OBJECT_DEVX && object <= MLX5_IB_OBJECT_STEERING_ANCHOR)
    return static_cast<int>(kCoreObjects + (object - MLX5_IB_OBJECT_DEVX));
  return -1;
}

// Core method ids are small: those below kById are also indexed by id, for a lookup without
// a scan; the others (driver methods, 0x1000 up) are found in their slot's list.
constexpr size_t kById = 16;

struct MethodIndex {
  std::array<std::array<const Method*, kMaxPerSlot>, kSlots> slots{};
  std::array<uint8_t, kSlots> counts{};
  std::array<std::array<const Method*, kById>, kSlots> by_id{};
};

constexpr MethodIndex BuildMethodIndex() {
  MethodIndex index;
  for (const auto& m : kMethods) {
    const auto slot = static_cast<size_t>(SlotOf(m.object));
    index.slots[slot][index.counts[slot]++] = &m;
    // The first entry with an id, as the scan finds it.
    if (m.id < kById && index.by_id[slot][m.id] == nullptr) index.by_id[slot][m.id] = &m;
  }
  return index;
}
constexpr MethodIndex kMethodIndex = BuildMethodIndex();

// Objects by slot too: the engine asks for an object's entry on most commands (quota, fd or
// handle object), so the lookup is an index, not a scan.
constexpr std::array<const Object*, kSlots> BuildObjectIndex() {
  std::array<const Object*, kSlots> index{};
  for (const auto& o : kObjects) index[static_cast<size_t>(SlotOf(o.id))] = &o;
  return index;
}
constexpr std::array<const Object*, kSlots> kObjectIndex = BuildObjectIndex();

}  // namespace

const Object* FindObject(ObjectId id) {
  const int slot = SlotOf(id);
  return slot < 0 ? nullptr : kObjectIndex[static_cast<size_t>(slot)];
}

std::string_view ObjectShortName(ObjectId id) {
  if (id == kAnyObject) return "ANY";
  const Object* o = FindObject(id);
  return o != nullptr ? o->short_name : std::string_view("?");
}

const Method* FindMethod(Driver driver, ObjectId object, uint16_t method) {
  const int slot = SlotOf(object);
  if (slot < 0) return nullptr;
  const auto s = static_cast<size_t>(slot);
  auto usable = [&](const Method* m) {
    return m != nullptr && (m->driver == Driver::kCore || m->driver == driver) ? m : nullptr;
  };
  if (method < kById) return usable(kMethodIndex.by_id[s][method]);
  for (size_t i = 0; i < kMethodIndex.counts[s]; ++i) {
    const Method* m = kMethodIndex.slots[s][i];
    if (m->id == method) return usable(m);
  }
  return nullptr;
}

namespace {
// Drivers that add attributes to some core method: every ioctl asks, most drivers have none.
constexpr bool AddsAttrs(Driver driver) {
  for (const auto& d : kDriverAttrs)
    if (d.driver == driver) return true;
  return false;
}
constexpr bool kAddsAttrs[] = {AddsAttrs(Driver::kCore), AddsAttrs(Driver::kMlx5),
                               AddsAttrs(Driver::kRxe)};
static_assert(static_cast<size_t>(Driver::kRxe) + 1 == std::size(kAddsAttrs));
}  // namespace

std::span<const Attr> DriverAttrsFor(const Method& method, Driver driver) {
  if (!kAddsAttrs[static_cast<size_t>(driver)]) return {};
  for (const auto& d : kDriverAttrs)
    if (d.driver == driver && d.object == method.object && d.method == method.id) return d.attrs;
  return {};
}

const Attr* FindAttr(const Method& method, Driver driver, uint16_t attr_id) {
  for (const auto& a : method.attrs)
    if (a.id == attr_id) return &a;
  for (const auto& a : DriverAttrsFor(method, driver))
    if (a.id == attr_id) return &a;
  return nullptr;
}

}  // namespace rxp::abi
