// Value names used by the trace printer (enum ib_uverbs_qp_type, ib_uverbs_access_flags, ...).
#include "abi/names.h"

namespace rxp::abi {
namespace {

constexpr NameEntry kQpTypes[] = {
    {IB_UVERBS_QPT_RC, "RC"},         {IB_UVERBS_QPT_UC, "UC"},
    {IB_UVERBS_QPT_UD, "UD"},         {IB_UVERBS_QPT_RAW_PACKET, "RAW_PACKET"},
    {IB_UVERBS_QPT_XRC_INI, "XRC_INI"}, {IB_UVERBS_QPT_XRC_TGT, "XRC_TGT"},
    {IB_UVERBS_QPT_DRIVER, "DRIVER"},
};
// enum ib_qp_state (include/rdma/ib_verbs.h): not in the UAPI headers, stable since 2.6.
constexpr NameEntry kQpStates[] = {
    {0, "RESET"}, {1, "INIT"}, {2, "RTR"}, {3, "RTS"}, {4, "SQD"}, {5, "SQE"}, {6, "ERR"},
};
constexpr NameEntry kAccessFlags[] = {
    {IB_UVERBS_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
    {IB_UVERBS_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
    {IB_UVERBS_ACCESS_REMOTE_READ, "REMOTE_READ"},
    {IB_UVERBS_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
    {IB_UVERBS_ACCESS_MW_BIND, "MW_BIND"},
    {IB_UVERBS_ACCESS_ZERO_BASED, "ZERO_BASED"},
    {IB_UVERBS_ACCESS_ON_DEMAND, "ON_DEMAND"},
    {IB_UVERBS_ACCESS_HUGETLB, "HUGETLB"},
    {IB_UVERBS_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING"},
};
constexpr NameEntry kWrOpcodes[] = {
    {IB_UVERBS_WR_RDMA_WRITE, "RDMA_WRITE"},
    {IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM"},
    {IB_UVERBS_WR_SEND, "SEND"},
    {IB_UVERBS_WR_SEND_WITH_IMM, "SEND_WITH_IMM"},
    {IB_UVERBS_WR_RDMA_READ, "RDMA_READ"},
    {IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP"},
    {IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD"},
    {IB_UVERBS_WR_LOCAL_INV, "LOCAL_INV"},
    {IB_UVERBS_WR_BIND_MW, "BIND_MW"},
    {IB_UVERBS_WR_SEND_WITH_INV, "SEND_WITH_INV"},
    {IB_UVERBS_WR_TSO, "TSO"},
    {IB_UVERBS_WR_RDMA_READ_WITH_INV, "RDMA_READ_WITH_INV"},
};
constexpr NameEntry kSrqTypes[] = {
    {IB_UVERBS_SRQT_BASIC, "BASIC"}, {IB_UVERBS_SRQT_XRC, "XRC"}, {IB_UVERBS_SRQT_TM, "TM"},
};
constexpr NameEntry kGidTypes[] = {
    {IB_UVERBS_GID_TYPE_IB, "IB"},
    {IB_UVERBS_GID_TYPE_ROCE_V1, "RoCEv1"},
    {IB_UVERBS_GID_TYPE_ROCE_V2, "RoCEv2"},
};
// enum ib_mw_type (ib_verbs.h): IB_MW_TYPE_1 = 1, IB_MW_TYPE_2 = 2.
constexpr NameEntry kMwTypes[] = {{1, "TYPE_1"}, {2, "TYPE_2"}};
// enum ib_port_state (ib_verbs.h).
constexpr NameEntry kPortStates[] = {
    {0, "NOP"}, {1, "DOWN"}, {2, "INIT"}, {3, "ARMED"}, {4, "ACTIVE"}, {5, "ACTIVE_DEFER"},
};
// enum ib_mtu.
constexpr NameEntry kMtus[] = {{1, "256"}, {2, "512"}, {3, "1024"}, {4, "2048"}, {5, "4096"}};
// IB_LINK_LAYER_* (ib_verbs.h).
constexpr NameEntry kLinkLayers[] = {{0, "UNSPECIFIED"}, {1, "InfiniBand"}, {2, "Ethernet"}};
// enum ib_uverbs_qp_attr_mask bits used by MODIFY_QP (IB_QP_* in ib_verbs.h).
constexpr NameEntry kQpAttrMask[] = {
    {1 << 0, "STATE"},       {1 << 1, "CUR_STATE"},     {1 << 2, "EN_SQD_ASYNC_NOTIFY"},
    {1 << 3, "ACCESS_FLAGS"}, {1 << 4, "PKEY_INDEX"},   {1 << 5, "PORT"},
    {1 << 6, "QKEY"},        {1 << 7, "AV"},            {1 << 8, "PATH_MTU"},
    {1 << 9, "TIMEOUT"},     {1 << 10, "RETRY_CNT"},    {1 << 11, "RNR_RETRY"},
    {1 << 12, "RQ_PSN"},     {1 << 13, "MAX_QP_RD_ATOMIC"}, {1 << 14, "ALT_PATH"},
    {1 << 15, "MIN_RNR_TIMER"}, {1 << 16, "SQ_PSN"},    {1 << 17, "MAX_DEST_RD_ATOMIC"},
    {1 << 18, "PATH_MIG_STATE"}, {1 << 19, "CAP"},      {1 << 20, "DEST_QPN"},
    {1 << 25, "RATE_LIMIT"},
};
// rdma_cm port spaces (enum rdma_ucm_port_space).
constexpr NameEntry kPortSpaces[] = {
    {RDMA_PS_IPOIB, "IPOIB"}, {RDMA_PS_IB, "IB"}, {RDMA_PS_TCP, "TCP"}, {RDMA_PS_UDP, "UDP"},
};
// enum rdma_cm_event_type (rdma/rdma_cm.h, kernel side; librdmacm mirrors it).
constexpr NameEntry kCmEvents[] = {
    {0, "ADDR_RESOLVED"},   {1, "ADDR_ERROR"},       {2, "ROUTE_RESOLVED"},
    {3, "ROUTE_ERROR"},     {4, "CONNECT_REQUEST"},  {5, "CONNECT_RESPONSE"},
    {6, "CONNECT_ERROR"},   {7, "UNREACHABLE"},      {8, "REJECTED"},
    {9, "ESTABLISHED"},     {10, "DISCONNECTED"},    {11, "DEVICE_REMOVAL"},
    {12, "MULTICAST_JOIN"}, {13, "MULTICAST_ERROR"}, {14, "ADDR_CHANGE"},
    {15, "TIMEWAIT_EXIT"},
};

}  // namespace

const NameTable kQpTypeNames{kQpTypes};
const NameTable kQpStateNames{kQpStates};
const NameTable kAccessFlagNames{kAccessFlags};
const NameTable kWrOpcodeNames{kWrOpcodes};
const NameTable kSrqTypeNames{kSrqTypes};
const NameTable kGidTypeNames{kGidTypes};
const NameTable kMwTypeNames{kMwTypes};
const NameTable kPortStateNames{kPortStates};
const NameTable kMtuNames{kMtus};
const NameTable kLinkLayerNames{kLinkLayers};
const NameTable kQpAttrMaskNames{kQpAttrMask};
const NameTable kPortSpaceNames{kPortSpaces};
const NameTable kCmEventNames{kCmEvents};

std::string_view NameOf(const NameTable& table, uint64_t value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return {};
}

}  // namespace rxp::abi
