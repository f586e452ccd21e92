#include "abi/ioctl_decoder.h"

#include <catch2/catch.hpp>

#include "abi/testing/request_builder.h"
#include "abi/write_decoder.h"

namespace rxp::abi {
namespace {

using testing::IoctlBuilder;

const DeviceAbi kRxe = DeviceAbiFor(RDMA_DRIVER_RXE);
const DeviceAbi kMlx5 = DeviceAbiFor(RDMA_DRIVER_MLX5);
constexpr uint16_t kOpt = 0;  // an optional attribute (no UVERBS_ATTR_F_MANDATORY)

// CQ.CREATE as rdma-core's ibv_cmd_create_cq_ex builds it for rxe.
IoctlBuilder RxeCqCreate() {
  IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, RDMA_DRIVER_RXE);
  b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
      .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 128, 4)
      .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 0x55aa55aa00001000, 8)
      .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
      .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 0x7fff0000, 4)
      .Handle(UVERBS_ATTR_CREATE_CQ_EVENT_FD, 5, kOpt)
      .Pointer(UVERBS_ATTR_UHW_OUT, 0x7fff0100, sizeof(rxe_create_cq_resp), kOpt);
  return b;
}

int DecodeErrno(const std::vector<std::byte>& bytes, const DeviceAbi& dev = kRxe) {
  IoctlRequest r;
  auto res = DecodeIoctl(bytes, dev, r);
  return res.ok() ? 0 : res.error().errnum;
}

TEST_CASE("a well-formed CQ.CREATE decodes with every attribute classified", "[ioctl]") {
  IoctlRequest r;
  auto bytes = RxeCqCreate().Build();
  REQUIRE(DecodeIoctl(bytes, kRxe, r).ok());
  REQUIRE(r.method != nullptr);
  CHECK(r.method->short_name == "CQ.CREATE");
  CHECK(r.num_attrs == 7);
  CHECK(r.num_dropped == 0);
  const IoctlAttr* cqe = r.Find(UVERBS_ATTR_CREATE_CQ_CQE);
  REQUIRE(cqe != nullptr);
  CHECK_FALSE(cqe->IsPointer());
  CHECK(cqe->InlineValue() == 128);
  const IoctlAttr* resp = r.Find(UVERBS_ATTR_CREATE_CQ_RESP_CQE);
  REQUIRE(resp != nullptr);
  CHECK(resp->IsPointer());  // PTR_OUT is a pointer even for 4 bytes
  CHECK(r.Find(UVERBS_ATTR_CREATE_CQ_EVENT_FD)->spec->type == AttrType::kFd);
  CHECK(r.Find(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL) == nullptr);
}

TEST_CASE("the header is checked as ib_uverbs_ioctl() checks it", "[ioctl]") {
  auto good = RxeCqCreate().Build();
  SECTION("truncated header") {
    std::vector<std::byte> short_bytes(good.begin(), good.begin() + 20);
    CHECK(DecodeErrno(short_bytes) == EINVAL);
  }
  SECTION("length that lies about the attribute count") {
    auto b = RxeCqCreate();
    b.MutableHeader() = IoctlHeader{static_cast<uint16_t>(good.size() + 16), UVERBS_OBJECT_CQ,
                                    UVERBS_METHOD_CQ_CREATE, 7, 0, RDMA_DRIVER_RXE, 0};
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("buffer shorter than the header's length") {
    std::vector<std::byte> cut(good.begin(), good.end() - 16);
    CHECK(DecodeErrno(cut) == EINVAL);
  }
  SECTION("overflowing attribute count") {
    auto b = RxeCqCreate();
    b.MutableHeader() = IoctlHeader{static_cast<uint16_t>(24 + 16 * 4000 % 65536),
                                    UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, 4000, 0,
                                    RDMA_DRIVER_RXE, 0};
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("reserved fields") {
    auto b = RxeCqCreate();
    auto h = IoctlHeader{static_cast<uint16_t>(good.size()), UVERBS_OBJECT_CQ,
                         UVERBS_METHOD_CQ_CREATE, 7, 1, RDMA_DRIVER_RXE, 0};
    b.MutableHeader() = h;
    CHECK(DecodeErrno(b.Build()) == EPROTONOSUPPORT);
    h.reserved1 = 0;
    h.reserved2 = 7;
    b.MutableHeader() = h;
    CHECK(DecodeErrno(b.Build()) == EPROTONOSUPPORT);
  }
  SECTION("driver id of another driver") { CHECK(DecodeErrno(good, kMlx5) == EINVAL); }
}

TEST_CASE("more attributes than the proxy accepts are refused", "[ioctl]") {
  IoctlBuilder b(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
  for (uint16_t i = 0; i < kMaxIoctlAttrs + 1; ++i) b.Inline(0x0800 + i, 0, 4, kOpt);
  CHECK(DecodeErrno(b.Build()) == EINVAL);
}

TEST_CASE("unknown objects and methods are EPROTONOSUPPORT", "[ioctl]") {
  CHECK(DecodeErrno(IoctlBuilder(UVERBS_OBJECT_CQ, 9, RDMA_DRIVER_RXE).Build()) ==
        EPROTONOSUPPORT);
  CHECK(DecodeErrno(IoctlBuilder(0x77, 0, RDMA_DRIVER_RXE).Build()) == EPROTONOSUPPORT);
  // An mlx5 method exists only on an mlx5 device.
  IoctlBuilder devx(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_EQN, RDMA_DRIVER_RXE);
  devx.Inline(MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC, 0, 4)
      .Pointer(MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN, 0x1000, 4);
  CHECK(DecodeErrno(devx.Build()) == EPROTONOSUPPORT);
  IoctlBuilder devx5(MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_EQN, RDMA_DRIVER_MLX5);
  devx5.Inline(MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC, 0, 4)
      .Pointer(MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN, 0x1000, 4);
  CHECK(DecodeErrno(devx5.Build(), kMlx5) == 0);
}

// Newer kernels add methods; the schema knows the ones rdma-core sends by default
// (ibv_devinfo -v asks QUERY_PORT_SPEED since rdma-core 62) and refuses the rest as an older
// kernel would, so rdma-core's own fallbacks apply.
TEST_CASE("QUERY_PORT_SPEED (newer than 6.12) decodes with the kernel's sizes", "[ioctl]") {
  auto query = [](uint16_t port_len, uint16_t speed_len) {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, kUverbsMethodQueryPortSpeed, RDMA_DRIVER_RXE);
    b.Inline(kUverbsAttrQueryPortSpeedPortNum, 1, port_len)
        .Pointer(kUverbsAttrQueryPortSpeedResp, 0x1000, speed_len);
    return b.Build();
  };
  CHECK(DecodeErrno(query(8, 8)) == 0);  // as ibv_cmd_query_port_speed() lays it out
  CHECK(DecodeErrno(query(4, 8)) == EINVAL);  // CONST_IN is 8 bytes
  CHECK(DecodeErrno(query(8, 4)) == EINVAL);  // UVERBS_ATTR_TYPE(u64)
  IoctlBuilder no_port(UVERBS_OBJECT_DEVICE, kUverbsMethodQueryPortSpeed, RDMA_DRIVER_RXE);
  no_port.Pointer(kUverbsAttrQueryPortSpeedResp, 0x1000, 8);
  CHECK(DecodeErrno(no_port.Build()) == EINVAL);
  // The next DEVICE method (an EFA completion-counter query) is not in the schema.
  CHECK(DecodeErrno(IoctlBuilder(UVERBS_OBJECT_DEVICE, kUverbsMethodQueryPortSpeed + 1,
                                 RDMA_DRIVER_RXE)
                        .Build()) == EPROTONOSUPPORT);
}

TEST_CASE("attributes: unknown, duplicated, missing", "[ioctl]") {
  SECTION("unknown mandatory attribute") {
    auto b = RxeCqCreate().Inline(0x0f, 1, 4);
    CHECK(DecodeErrno(b.Build()) == EPROTONOSUPPORT);
  }
  SECTION("unknown optional attribute is dropped, as the kernel ignores it") {
    IoctlRequest r;
    auto bytes = RxeCqCreate().Inline(0x0f, 1, 4, kOpt).Build();
    REQUIRE(DecodeIoctl(bytes, kRxe, r).ok());
    CHECK(r.num_dropped == 1);
    CHECK(r.attrs[7].spec == nullptr);
  }
  SECTION("duplicate attribute") {
    auto b = RxeCqCreate().Inline(UVERBS_ATTR_CREATE_CQ_CQE, 16, 4);
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("missing mandatory attribute") {
    IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, RDMA_DRIVER_RXE);
    b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0).Inline(UVERBS_ATTR_CREATE_CQ_CQE, 1, 4);
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("unknown flag bits are ignored, as uverbs_set_attr() ignores them") {
    auto b = RxeCqCreate().Inline(UVERBS_ATTR_CREATE_CQ_FLAGS, 0, 4, 0x8 | 0x80);
    CHECK(DecodeErrno(b.Build()) == 0);
  }
  SECTION("a driver attribute of another driver is unknown") {
    auto b = RxeCqCreate().Inline(kMlx5IbAttrCreateCqUarIndex, 0, 4);
    CHECK(DecodeErrno(b.Build()) == EPROTONOSUPPORT);
  }
}

TEST_CASE("per-type rules of uverbs_process_attr", "[ioctl]") {
  SECTION("IDR with a length") {
    IoctlBuilder b(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
    b.Attr(UVERBS_ATTR_DESTROY_PD_HANDLE, 4, 1);
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("PTR_IN of the wrong size") {
    IoctlBuilder b(UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, RDMA_DRIVER_RXE);
    b.Handle(UVERBS_ATTR_CREATE_CQ_HANDLE, 0)
        .Inline(UVERBS_ATTR_CREATE_CQ_CQE, 1, 8)  // u32 sent as 8 bytes
        .Inline(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 0, 8)
        .Inline(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0, 4)
        .Pointer(UVERBS_ATTR_CREATE_CQ_RESP_CQE, 0x1000, 4);
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("CONST_IN must be 8 bytes") {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, RDMA_DRIVER_RXE);
    b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 1)
        .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, 0x1000, sizeof(ib_uverbs_query_port_resp_ex));
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("STRUCT output shorter than its last member") {
    // UVERBS_ATTR_STRUCT(ib_uverbs_query_port_resp_ex, reserved / active_speed_ex): all 48
    // bytes, not just up to port_cap_flags2 (42).
    for (const uint16_t len : {uint16_t{40}, uint16_t{42}, uint16_t{47}}) {
      IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, RDMA_DRIVER_RXE);
      b.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
          .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, 0x1000, len);
      CHECK(DecodeErrno(b.Build()) == EINVAL);
    }
    IoctlBuilder whole(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, RDMA_DRIVER_RXE);
    whole.Inline(UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1, 8)
        .Pointer(UVERBS_ATTR_QUERY_PORT_RESP, 0x1000, 48);
    CHECK(DecodeErrno(whole.Build()) == 0);
  }
  SECTION("reserved attr_data") {
    ib_uverbs_attr a{};
    a.attr_id = UVERBS_ATTR_DESTROY_PD_HANDLE;
    a.attr_data.reserved = 1;
    a.flags = UVERBS_ATTR_F_MANDATORY;
    IoctlBuilder b(UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, RDMA_DRIVER_RXE);
    b.Raw(a);
    CHECK(DecodeErrno(b.Build()) == EINVAL);
  }
  SECTION("RAW_FD out of int range") {
    IoctlBuilder b(MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_REG, RDMA_DRIVER_MLX5);
    b.Handle(MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE, 0)
        .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR, 0x1000, 8)
        .Inline(MLX5_IB_ATTR_DEVX_UMEM_REG_LEN, 0x1000, 8)
        .Pointer(MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, 0x2000, 4)
        .Handle(MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD, uint64_t{1} << 40, kOpt);
    CHECK(DecodeErrno(b.Build(), kMlx5) == EINVAL);
  }
  SECTION("ENUM_IN element out of range") {
    ib_uverbs_attr a{};
    a.attr_id = MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE;
    a.flags = UVERBS_ATTR_F_MANDATORY;
    a.attr_data.enum_data.elem_id = 9;
    IoctlBuilder b(MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_CREATE,
                   RDMA_DRIVER_MLX5);
    b.Raw(a);
    CHECK(DecodeErrno(b.Build(), kMlx5) == EOPNOTSUPP);
  }
  SECTION("IDRS array length not a multiple of 4 and count out of bounds") {
    auto flow = [](uint16_t actions_len) {
      IoctlBuilder b(UVERBS_OBJECT_FLOW, MLX5_IB_METHOD_CREATE_FLOW, RDMA_DRIVER_MLX5);
      b.Handle(MLX5_IB_ATTR_CREATE_FLOW_HANDLE, 0)
          .Pointer(MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE, 0x1000, 64)
          .Handle(MLX5_IB_ATTR_CREATE_FLOW_MATCHER, 1)
          .Pointer(MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS, 0x2000, actions_len, kOpt);
      return b.Build();
    };
    CHECK(DecodeErrno(flow(6), kMlx5) == EINVAL);
    CHECK(DecodeErrno(flow(4 * 40), kMlx5) == EINVAL);
    CHECK(DecodeErrno(flow(8), kMlx5) == 0);
  }
}

// An ENUM_IN attribute selecting `elem`, `len` bytes of `data` (inline when len <= 8).
ib_uverbs_attr EnumAttr(uint16_t id, uint8_t elem, uint16_t len, uint64_t data,
                        uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
  ib_uverbs_attr a{};
  a.attr_id = id;
  a.flags = flags;
  a.len = len;
  a.attr_data.enum_data.elem_id = elem;
  a.data = data;
  return a;
}

// hw/mlx5/fs.c, MLX5_IB_METHOD_CREATE_FLOW: the match value is up to
// sizeof(struct mlx5_ib_match_params) (640 bytes, misc4/misc5 included), and at most
// MLX5_IB_CREATE_FLOW_MAX_FLOW_ACTIONS (2) flow actions.
TEST_CASE("mlx5 CREATE_FLOW is held to fs.c's match size and action count", "[ioctl]") {
  auto flow = [](uint16_t match_len, uint16_t actions) {
    IoctlBuilder b(UVERBS_OBJECT_FLOW, MLX5_IB_METHOD_CREATE_FLOW, RDMA_DRIVER_MLX5);
    b.Handle(MLX5_IB_ATTR_CREATE_FLOW_HANDLE, 0)
        .Pointer(MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE, 0x1000, match_len)
        .Handle(MLX5_IB_ATTR_CREATE_FLOW_MATCHER, 1);
    if (actions > 0)
      b.Pointer(MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS, 0x2000,
                static_cast<uint16_t>(actions * sizeof(uint32_t)), 0);
    return DecodeErrno(b.Build(), kMlx5);
  };
  CHECK(flow(640, 0) == 0);
  CHECK(flow(513, 0) == 0);
  CHECK(flow(641, 0) == EINVAL);
  CHECK(flow(64, 2) == 0);
  CHECK(flow(64, 3) == EINVAL);
}

TEST_CASE("ENUM_IN data is held to the selected element's PTR_IN spec", "[ioctl]") {
  // MLX5_IB_METHOD_FLOW_MATCHER_CREATE's flow type: NORMAL carries a u16 priority, the other
  // elements carry nothing (mlx5_ib_flow_type[] in hw/mlx5/fs.c).
  auto matcher = [](uint8_t elem, uint16_t len) {
    IoctlBuilder b(MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_CREATE,
                   RDMA_DRIVER_MLX5);
    b.Handle(MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE, 0)
        .Pointer(MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK, 0x1000, 64)
        .Raw(EnumAttr(MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE, elem, len, 0))
        .Inline(MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA, 1, 1);
    return b.Build();
  };
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_NORMAL, 2), kMlx5) == 0);
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_NORMAL, 0), kMlx5) == EINVAL);
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_NORMAL, 4), kMlx5) == EINVAL);
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_SNIFFER, 0), kMlx5) == 0);
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_ALL_DEFAULT, 2), kMlx5) == EINVAL);
  CHECK(DecodeErrno(matcher(MLX5_IB_FLOW_TYPE_MC_DEFAULT + 1, 0), kMlx5) == EOPNOTSUPP);

  // The ESP replay window: NONE carries nothing, BMP a UVERBS_ATTR_STRUCT whose bytes past the
  // struct must be zero (EOPNOTSUPP) -- checked before the lengths, as uverbs_process_attr does.
  auto esp = [](uint8_t replay, uint16_t len, uint64_t data) {
    IoctlBuilder b(UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_CREATE,
                   RDMA_DRIVER_MLX5);
    b.Handle(UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE, 0)
        .Pointer(UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS, 0x1000, sizeof(ib_uverbs_flow_action_esp))
        .Raw(EnumAttr(UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT,
                      IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM,
                      sizeof(ib_uverbs_flow_action_esp_keymat_aes_gcm), 0x2000))
        .Raw(EnumAttr(UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY, replay, len, data, kOpt));
    return b.Build();
  };
  constexpr uint8_t kNone = IB_UVERBS_FLOW_ACTION_ESP_REPLAY_NONE;
  constexpr uint8_t kBmp = IB_UVERBS_FLOW_ACTION_ESP_REPLAY_BMP;
  CHECK(DecodeErrno(esp(kNone, 0, 0), kMlx5) == 0);
  CHECK(DecodeErrno(esp(kNone, 4, 64), kMlx5) == EINVAL);
  CHECK(DecodeErrno(esp(kBmp, 4, 64), kMlx5) == 0);
  CHECK(DecodeErrno(esp(kBmp, 2, 64), kMlx5) == EINVAL);
  CHECK(DecodeErrno(esp(kBmp, 8, 64), kMlx5) == 0);                       // zeros past it
  CHECK(DecodeErrno(esp(kBmp, 8, uint64_t{1} << 32 | 64), kMlx5) == EOPNOTSUPP);

  // After decoding, the attribute reports the selected element's lengths (the engine checks
  // pointed-to trailing bytes against them once copied in).
  IoctlRequest r;
  auto bytes = esp(kBmp, 4, 64);
  REQUIRE(DecodeIoctl(bytes, kMlx5, r).ok());
  const IoctlAttr* keymat = r.Find(UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT);
  REQUIRE(keymat != nullptr);
  CHECK(keymat->IsPointer());
  CHECK(keymat->Ptr().zero_trailing);
  CHECK(keymat->Ptr().max_len == sizeof(ib_uverbs_flow_action_esp_keymat_aes_gcm));
  CHECK(r.Find(UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY)->Ptr().min_len == 4);
}

TEST_CASE("INVOKE_WRITE resolves the wrapped legacy command", "[ioctl]") {
  auto invoke = [](uint64_t cmd, uint16_t in_len, uint16_t out_len) {
    IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_RXE);
    b.Inline(UVERBS_ATTR_WRITE_CMD, cmd, 8)
        .Pointer(UVERBS_ATTR_CORE_IN, 0x1000, in_len)
        .Pointer(UVERBS_ATTR_CORE_OUT, 0x2000, out_len, kOpt);
    return b.Build();
  };
  IoctlRequest r;
  auto good = invoke(IB_USER_VERBS_CMD_REG_MR, sizeof(ib_uverbs_reg_mr),
                     sizeof(ib_uverbs_reg_mr_resp));
  REQUIRE(DecodeIoctl(good, kRxe, r).ok());
  REQUIRE(r.write_command != nullptr);
  CHECK(r.write_command->short_name == "REG_MR");
  CHECK(DecodeErrno(invoke(IB_USER_VERBS_CMD_REG_MR, 32, 12)) == ENOSPC);
  CHECK(DecodeErrno(invoke(IB_USER_VERBS_CMD_REG_MR, 40, 8)) == ENOSPC);
  CHECK(DecodeErrno(invoke(IB_USER_VERBS_CMD_MODIFY_AH, 40, 8)) == EOPNOTSUPP);
  CHECK(DecodeErrno(invoke(63, 40, 8)) == EOPNOTSUPP);
  CHECK(DecodeErrno(invoke(0x100, 40, 8)) == EINVAL);
  CHECK(DecodeErrno(invoke(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
                           8, 184)) == 0);
}

// An mlx5 QP.CREATE as libmlx5 sends it for a UD QP; `source_qpn` adds the SOURCE_QPN attribute
// rdma-core sends for IBV_QP_CREATE_SOURCE_QPN (libibverbs cmd_qp.c: the flag itself is not).
std::vector<std::byte> Mlx5UdQpCreate(bool source_qpn) {
  IoctlBuilder b(UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, RDMA_DRIVER_MLX5);
  b.Handle(UVERBS_ATTR_CREATE_QP_HANDLE, 0)
      .Handle(UVERBS_ATTR_CREATE_QP_PD_HANDLE, 1, kOpt)
      .Handle(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 2, kOpt)
      .Handle(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 2, kOpt)
      .Inline(UVERBS_ATTR_CREATE_QP_TYPE, IB_UVERBS_QPT_UD, 8)
      .Inline(UVERBS_ATTR_CREATE_QP_USER_HANDLE, 0x5500, 8)
      .Pointer(UVERBS_ATTR_CREATE_QP_CAP, 0x1000, sizeof(ib_uverbs_qp_cap))
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_CAP, 0x1100, sizeof(ib_uverbs_qp_cap))
      .Pointer(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 0x1200, 4)
      .Pointer(UVERBS_ATTR_UHW_IN, 0x1300, sizeof(mlx5_ib_create_qp), kOpt);
  if (source_qpn) b.Inline(UVERBS_ATTR_CREATE_QP_SOURCE_QPN, 0x1e6, 4, kOpt);
  return b.Build();
}

const Layout* Mlx5CreateQpLayout(const std::vector<std::byte>& bytes) {
  IoctlRequest r;
  REQUIRE(DecodeIoctl(bytes, kMlx5, r).ok());
  const DriverPayload* p = DriverPayloadFor(r, kMlx5);
  REQUIRE(p != nullptr);
  return p->InFor(DriverContext(r, {}, {}));
}

// create_user_qp() (hw/mlx5/qp.c) sends a QP with IB_QP_CREATE_SOURCE_QPN -- set from the
// SOURCE_QPN attribute by UVERBS_HANDLER(UVERBS_METHOD_QP_CREATE) -- to create_raw_packet_qp(),
// which pins the separate send queue at sq_buf_addr (captured: mlx5_verbs_ib.jsonl).
TEST_CASE("an mlx5 underlay UD QP (source QPN) pins sq_buf_addr on both paths", "[ioctl]") {
  const Layout* plain = Mlx5CreateQpLayout(Mlx5UdQpCreate(false));
  CHECK(plain->Find("sq_buf_addr")->kind == FieldKind::kReserved);
  const Layout* underlay = Mlx5CreateQpLayout(Mlx5UdQpCreate(true));
  CHECK(underlay->c_name == "mlx5_ib_create_qp (raw packet)");
  CHECK(underlay->Find("sq_buf_addr")->kind == FieldKind::kPinnedVa);

  ib_uverbs_ex_create_qp ex{};
  ex.qp_type = IB_UVERBS_QPT_UD;
  ex.create_flags = 1u << 10;  // IB_QP_CREATE_SOURCE_QPN
  const mlx5_ib_create_qp ucmd{};
  const auto bytes = testing::ExWrite(IB_USER_VERBS_EX_CMD_CREATE_QP, ex, 0x2000, 5,
                                      testing::Bytes(ucmd), 5);
  auto w = DecodeWrite(bytes, kMlx5);  // its spans point into `bytes`
  REQUIRE(w.ok());
  const DriverPayload* p = w->command->drivers.For(Driver::kMlx5);
  REQUIRE(p != nullptr);
  CHECK(p->InFor(DriverContext(*w->command, w->core, w->driver))->Find("sq_buf_addr")->kind ==
        FieldKind::kPinnedVa);
}

// The same legacy request wrapped in INVOKE_WRITE: its layout is chosen from CORE_IN, as the
// write handler reads it, not from QP.CREATE attributes an INVOKE_WRITE does not have.
TEST_CASE("INVOKE_WRITE CREATE_QP picks the mlx5 layout from the legacy request", "[ioctl]") {
  ib_uverbs_create_qp legacy{};
  legacy.qp_type = IB_UVERBS_QPT_RAW_PACKET;
  IoctlBuilder b(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, RDMA_DRIVER_MLX5);
  b.Inline(UVERBS_ATTR_WRITE_CMD, IB_USER_VERBS_CMD_CREATE_QP, 8)
      .Pointer(UVERBS_ATTR_CORE_IN, 0x1000, sizeof(legacy))
      .Pointer(UVERBS_ATTR_CORE_OUT, 0x2000, sizeof(ib_uverbs_create_qp_resp))
      .Pointer(UVERBS_ATTR_UHW_IN, 0x3000, sizeof(mlx5_ib_create_qp), kOpt);
  const auto bytes = b.Build();
  IoctlRequest r;
  REQUIRE(DecodeIoctl(bytes, kMlx5, r).ok());
  const DriverPayload* p = DriverPayloadFor(r, kMlx5);
  REQUIRE(p != nullptr);
  const auto core = std::as_bytes(std::span(&legacy, 1));
  const Layout* raw = p->InFor(DriverContext(r, core, {}));
  CHECK(raw->c_name == "mlx5_ib_create_qp (raw packet)");
  CHECK(raw->Find("sq_buf_addr")->kind == FieldKind::kPinnedVa);
  legacy.qp_type = IB_UVERBS_QPT_RC;
  CHECK(p->InFor(DriverContext(r, core, {}))->Find("sq_buf_addr")->kind == FieldKind::kReserved);
}

}  // namespace
}  // namespace rxp::abi
