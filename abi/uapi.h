// The kernel UAPI the schema is built on: the headers installed by linux-libc-dev / rdma-core
// (/usr/include/rdma/*.h), plus the few constants newer kernels added that those headers lack.
// Every struct size the schema relies on is pinned here with a static_assert, so a header
// change that moves a field breaks the build instead of silently mis-decoding.
#pragma once

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/rdma_user_rxe.h>

#include <cstddef>
#include <cstdint>

namespace rxp::abi {

// Driver-namespace ids start here (UVERBS_ID_NS_SHIFT): UHW_IN = 0x1000, UHW_OUT = 0x1001.
inline constexpr uint16_t kDriverNamespace = 1u << UVERBS_ID_NS_SHIFT;

// Newer than the installed headers (linux-libc-dev 6.1), present in the Debian 6.12 kernel:
// include/uapi/rdma/ib_user_ioctl_cmds.h: the first driver attr id of a method that has UHW.
inline constexpr uint16_t kUverbsIdDriverNsWithUhw = kDriverNamespace + 2;
// include/uapi/rdma/mlx5_user_ioctl_cmds.h (6.12).
inline constexpr uint16_t kMlx5IbAttrCreateCqUarIndex = kUverbsIdDriverNsWithUhw;
inline constexpr uint16_t kMlx5IbAttrRegDmabufMrAccessFlags = kDriverNamespace;
inline constexpr uint16_t kMlx5IbMethodGetDataDirectSysfsPath = MLX5_IB_METHOD_QUERY_PORT + 1;
inline constexpr uint16_t kMlx5IbAttrGetDataDirectSysfsPath = kDriverNamespace;

// Newer than the Debian 6.12 kernel: include/uapi/rdma/ib_user_ioctl_cmds.h after kernel commit
// aaecff5e13cd ("RDMA/mlx5: Implement query_port_speed callback"); rdma-core v62's
// ibv_query_port_speed() (and so ibv_devinfo -v) sends it. A kernel without it answers
// EPROTONOSUPPORT (unknown method), which the request then gets from the real kernel.
inline constexpr uint16_t kUverbsMethodQueryPortSpeed = UVERBS_METHOD_QUERY_GID_ENTRY + 1;
inline constexpr uint16_t kUverbsAttrQueryPortSpeedPortNum = 0;
inline constexpr uint16_t kUverbsAttrQueryPortSpeedResp = 1;

// enum ib_mr_rereg_flags (include/rdma/ib_verbs.h, not UAPI): REREG_MR.flags bits.
inline constexpr uint32_t kMrReregTrans = 1;   // new start/length/hca_va: the range is pinned
inline constexpr uint32_t kMrReregPd = 2;
inline constexpr uint32_t kMrReregAccess = 4;

// The ioctl framing (rdma_user_ioctl_cmds.h). ib_uverbs_ioctl_hdr ends in a flexible array,
// which C++ cannot hold by value; IoctlHeader is its fixed 24-byte part, pinned field by field.
struct IoctlHeader {
  uint16_t length;
  uint16_t object_id;
  uint16_t method_id;
  uint16_t num_attrs;
  uint64_t reserved1;
  uint32_t driver_id;
  uint32_t reserved2;
};
static_assert(sizeof(ib_uverbs_ioctl_hdr) == 24 && sizeof(IoctlHeader) == 24);
static_assert(offsetof(IoctlHeader, length) == offsetof(ib_uverbs_ioctl_hdr, length));
static_assert(offsetof(IoctlHeader, object_id) == offsetof(ib_uverbs_ioctl_hdr, object_id));
static_assert(offsetof(IoctlHeader, method_id) == offsetof(ib_uverbs_ioctl_hdr, method_id));
static_assert(offsetof(IoctlHeader, num_attrs) == offsetof(ib_uverbs_ioctl_hdr, num_attrs));
static_assert(offsetof(IoctlHeader, reserved1) == offsetof(ib_uverbs_ioctl_hdr, reserved1));
static_assert(offsetof(IoctlHeader, driver_id) == offsetof(ib_uverbs_ioctl_hdr, driver_id));
static_assert(offsetof(IoctlHeader, reserved2) == offsetof(ib_uverbs_ioctl_hdr, reserved2));
static_assert(sizeof(ib_uverbs_attr) == 16);
static_assert(RDMA_VERBS_IOCTL == 0xc0181b01u);

// The legacy write framing (ib_user_verbs.h).
static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);
static_assert(sizeof(ib_uverbs_ex_cmd_hdr) == 16);

// Core request / response structs (sizes measured with gcc on the installed headers).
static_assert(sizeof(ib_uverbs_get_context) == 8 && sizeof(ib_uverbs_get_context_resp) == 8);
static_assert(sizeof(ib_uverbs_query_device_resp) == 176);
static_assert(sizeof(ib_uverbs_ex_query_device_resp) == 304);
static_assert(sizeof(ib_uverbs_query_port) == 16 && sizeof(ib_uverbs_query_port_resp) == 40);
static_assert(sizeof(ib_uverbs_create_ah) == 56);
static_assert(sizeof(ib_uverbs_reg_mr) == 40 && sizeof(ib_uverbs_reg_mr_resp) == 12);
static_assert(sizeof(ib_uverbs_rereg_mr) == 48 && sizeof(ib_uverbs_rereg_mr_resp) == 8);
static_assert(sizeof(ib_uverbs_alloc_mw) == 16 && sizeof(ib_uverbs_alloc_mw_resp) == 8);
static_assert(sizeof(ib_uverbs_create_cq) == 32 && sizeof(ib_uverbs_ex_create_cq) == 32);
static_assert(sizeof(ib_uverbs_ex_create_cq_resp) == 16);
static_assert(sizeof(ib_uverbs_create_qp) == 56 && sizeof(ib_uverbs_create_qp_resp) == 32);
static_assert(sizeof(ib_uverbs_ex_create_qp) == 64 && sizeof(ib_uverbs_ex_create_qp_resp) == 40);
static_assert(sizeof(ib_uverbs_modify_qp) == 112 && sizeof(ib_uverbs_ex_modify_qp) == 120);
static_assert(sizeof(ib_uverbs_query_qp_resp) == 128);
static_assert(sizeof(ib_uverbs_post_send) == 24 && sizeof(ib_uverbs_send_wr) == 56);
static_assert(sizeof(ib_uverbs_post_recv) == 24 && sizeof(ib_uverbs_recv_wr) == 16);
static_assert(sizeof(ib_uverbs_sge) == 16 && sizeof(ib_uverbs_wc) == 48);
static_assert(sizeof(ib_uverbs_create_srq) == 32 && sizeof(ib_uverbs_create_xsrq) == 48);
static_assert(sizeof(ib_uverbs_open_xrcd) == 16 && sizeof(ib_uverbs_open_qp) == 32);
static_assert(sizeof(ib_uverbs_create_flow) == 24 && sizeof(ib_uverbs_flow_attr) == 16);
static_assert(sizeof(ib_uverbs_ex_create_wq) == 40 && sizeof(ib_uverbs_ex_create_wq_resp) == 24);
static_assert(sizeof(ib_uverbs_ex_create_rwq_ind_table) == 8);
static_assert(sizeof(ib_uverbs_qp_dest) == 32 && sizeof(ib_uverbs_ah_attr) == 32);
static_assert(sizeof(ib_uverbs_query_port_resp_ex) == 48 && sizeof(ib_uverbs_gid_entry) == 32);
static_assert(sizeof(ib_uverbs_qp_cap) == 20);
static_assert(sizeof(ib_uverbs_async_event_desc) == 16 && sizeof(ib_uverbs_comp_event_desc) == 8);

// Driver payloads.
static_assert(sizeof(mlx5_ib_create_qp) == 56 && sizeof(mlx5_ib_create_qp_rss) == 152);
static_assert(sizeof(mlx5_ib_create_qp_resp) == 40);
static_assert(sizeof(mlx5_ib_create_cq) == 32 && sizeof(mlx5_ib_resize_cq) == 16);
static_assert(sizeof(mlx5_ib_create_srq) == 32 && sizeof(mlx5_ib_create_wq) == 48);
static_assert(sizeof(mlx5_ib_alloc_ucontext_req_v2) == 32);
static_assert(sizeof(mlx5_ib_alloc_ucontext_resp) == 72);
static_assert(sizeof(mlx5_ib_create_flow) == 8);
static_assert(sizeof(mminfo) == 16 && sizeof(rxe_create_cq_resp) == 16);
static_assert(sizeof(rxe_create_qp_resp) == 32 && sizeof(rxe_create_srq_resp) == 24);
static_assert(sizeof(rxe_modify_srq_cmd) == 8 && sizeof(rxe_resize_cq_resp) == 16);

// rdma_cm (ucma) framing and the structs that carry pointers or fds.
static_assert(sizeof(rdma_ucm_cmd_hdr) == 8);
static_assert(sizeof(rdma_ucm_create_id) == 24 && sizeof(rdma_ucm_event_resp) == 336);
static_assert(sizeof(rdma_ucm_set_option) == 24 && sizeof(rdma_ucm_migrate_id) == 16);
static_assert(sizeof(rdma_ucm_connect) == 288 && sizeof(rdma_ucm_accept) == 296);

}  // namespace rxp::abi
