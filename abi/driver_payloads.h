// Driver payloads: what mlx5 and rxe carry in udata (UHW_IN / UHW_OUT in the ioctl ABI,
// driver data after the core structs in the write ABI). Each object names the request and
// response layouts of one command family for one driver.
#pragma once

#include "abi/schema.h"

namespace rxp::abi::drivers {

// mlx5 (include/uapi/rdma/mlx5-abi.h; drivers/infiniband/hw/mlx5).
extern const DriverPayload kMlx5AllocUcontext, kMlx5QueryDevice, kMlx5AllocPd, kMlx5CreateAh;
extern const DriverPayload kMlx5AllocMw, kMlx5CreateCq, kMlx5ResizeCq, kMlx5CreateSrq;
extern const DriverPayload kMlx5CreateQp, kMlx5ModifyQp, kMlx5CreateWq, kMlx5ModifyWq;
extern const DriverPayload kMlx5CreateRwqIndTbl, kMlx5CreateFlow;

// rxe (include/uapi/rdma/rdma_user_rxe.h; drivers/infiniband/sw/rxe).
extern const DriverPayload kRxeCreateAh, kRxeCreateCq, kRxeResizeCq, kRxeCreateQp;
extern const DriverPayload kRxeCreateSrq, kRxeModifySrq;

// Layouts the ioctl tables and the printer refer to directly.
extern const Layout kMlx5AllocUcontextResp;  // QUERY_CONTEXT's MLX5 UCTX attr
extern const Layout kMlx5QueryPortUapi;      // mlx5 DEVICE.QUERY_PORT response
extern const Layout kRxeMmapInfo;            // struct mminfo (rxe queue mmap cookie)
extern const Layout kMlx5FlowCountersData;   // EX_CREATE_FLOW driver data entries

}  // namespace rxp::abi::drivers
